/**
 * The budget key of a client address: IPv4 as it is, IPv6 by its /64, which one subscriber
 * usually holds whole (so one household or school cannot multiply a per-address budget by
 * walking its own prefix). Every per-address budget keys by it: the data API's rate limits
 * (./rate-limit.ts), the login throttle and the self-service budgets (src/oauth/).
 */
export function addressKey(address: string): string {
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address;
  return bare.includes(':') ? expandIpv6(bare).slice(0, 4).join(':') : bare;
}

function expandIpv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right];
}
