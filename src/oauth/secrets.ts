import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '../compare.js';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

/**
 * argon2id with the OWASP-recommended cost (19 MiB, 2 passes, 1 lane). `Algorithm` is an
 * ambient const enum, which isolated modules cannot read, hence the literal (Argon2id = 2).
 */
const ARGON2ID = 2 as Algorithm;
const PASSWORD_HASH_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** Hashes a password with argon2id (a PHC string starting with $argon2id$). */
export async function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** Checks a password against its hash; false (never a throw) for a malformed hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A new client secret: 256 random bits, URL-safe. */
export function newClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Client secrets are random 256-bit values, so a fast hash is enough to make a leaked database
 * useless (no dictionary to try); SHA-256 hex is what is stored.
 */
export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time check of a presented client secret against the stored hash. */
export function clientSecretMatches(presented: string, storedHash: string | undefined): boolean {
  if (!storedHash) return false;
  return sameSecret(hashClientSecret(presented), storedHash);
}
