import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The one constant-time comparison of secrets in src/ (CSRF tokens, OAuth states, client
 * secrets, API-key and email-code hashes). Both sides are hashed first, so texts of different
 * lengths compare in the same time too and nothing about the expected value's length leaks.
 */
export function sameSecret(presented: string | Buffer | undefined | null, expected: string | Buffer): boolean {
  if (presented === undefined || presented === null) return false;
  const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
