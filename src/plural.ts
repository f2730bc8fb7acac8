/**
 * An English count in words: `1 document`, `2 documents`, `1 minute`. One rule for every English
 * text that counts (the backup commands, the sign-in and self-service pages); Korean needs none.
 */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
