import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { generateSecret, generateURI, verify } from 'otplib';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AccountMfaStore } from '../data/accounts/second-factors.js';
import type { Database } from '../data/database.js';
import { limiter } from './throttle.js';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. */
export const TOTP = { digits: 6, period: 30 } as const;
/** One step either side of the server's clock: a phone a little fast or slow still works. */
const TOLERANCE_SECONDS = 30;
/** Recovery codes made at enrolment, each good once. */
export const RECOVERY_CODE_COUNT = 10;
/**
 * Second factors checked per account before it waits (the password was right: a guesser has it).
 * Each check spends a point before the code is looked at, and a right code gives the account its
 * points back, so only wrong (or still unanswered) codes count.
 */
export const MFA_FAILURE_LIMIT = { points: 5, durationSeconds: 15 * 60 };
/** The issuer an authenticator app shows beside the account. */
const ISSUER = 'Campus Data Service';

/** What enrolment hands out, once: the key for the app, as text and as an otpauth:// URI, and the recovery codes. */
export interface MfaEnrolment {
  readonly secret: string;
  readonly uri: string;
  readonly recoveryCodes: readonly string[];
}

export interface MfaStatus {
  /** Sign-ins ask for the second factor. */
  readonly active: boolean;
  /** Enrolment started, not yet confirmed with a code. */
  readonly pending: boolean;
  readonly recoveryLeft: number;
}

/** Too many wrong second factors on the account: wait `retryAfterSeconds`. */
export class MfaLimited extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many wrong second factors');
  }
}

/**
 * Two-factor sign-in (docs/accounts.md, "Two-step sign-in"): a TOTP secret (RFC 6238, otplib) per
 * account, sealed with AES-256-GCM under keys derived from the cookie keys (the first seals,
 * every one opens, as OAUTH_COOKIE_KEYS rotate), and recovery codes stored as SHA-256 hashes.
 * A code is accepted once (its time step is remembered); checks are limited per account, each
 * spending its point before the code is checked (as the login throttle does: src/oauth/throttle.ts),
 * so that codes sent at once cannot all pass a read of the count.
 */
export class MfaService {
  private readonly store: AccountMfaStore;
  private readonly keys: Buffer[];
  private readonly attempts: RateLimiterAbstract;

  constructor(
    db: Database,
    cookieKeys: readonly string[],
    private readonly now: () => Date = () => new Date(),
    redis?: Redis,
  ) {
    if (cookieKeys.length === 0) throw new Error('no cookie keys: second factors cannot be sealed');
    this.store = new AccountMfaStore(db);
    this.keys = cookieKeys.map((key) => createHash('sha256').update(`campus-mfa:${key}`).digest());
    // The Redis keys keep their name: counts of a running deployment carry over.
    this.attempts = limiter('campus:mfa:failures', MFA_FAILURE_LIMIT, redis);
  }

  async status(accountId: number): Promise<MfaStatus> {
    const doc = await this.store.find(accountId);
    return { active: doc?.active === true, pending: doc?.active === false, recoveryLeft: doc?.active ? doc.recoveryHashes.length : 0 };
  }

  /**
   * A new secret and recovery codes. `active: false` (the console): sign-ins ask for it only
   * after `confirm` with a code from the app; `active: true` (the operators' command): at once.
   * Any earlier factor of the account is replaced.
   */
  async enrol(accountId: number, email: string, options: { active: boolean }): Promise<MfaEnrolment> {
    const secret = generateSecret();
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.store.put(
      accountId,
      { secret: this.seal(secret), recoveryHashes: recoveryCodes.map(hashRecoveryCode), active: options.active },
      this.now(),
    );
    return { secret, uri: generateURI({ issuer: ISSUER, label: email, secret, ...TOTP }), recoveryCodes };
  }

  /** The secret of an enrolment in progress (to show it again), or undefined. */
  async pendingSecret(accountId: number, email: string): Promise<{ secret: string; uri: string } | undefined> {
    const doc = await this.store.find(accountId);
    const secret = doc && !doc.active ? this.open(doc.secret) : undefined;
    return secret ? { secret, uri: generateURI({ issuer: ISSUER, label: email, secret, ...TOTP }) } : undefined;
  }

  /**
   * Confirms an enrolment with a code from the app: the factor is then active, and its recovery
   * codes (made now, shown once) are returned; null for a wrong code. MfaLimited after too many.
   */
  async confirm(accountId: number, code: string): Promise<readonly string[] | null> {
    const doc = await this.store.find(accountId);
    if (!doc || doc.active) return null;
    await this.spendAttempt(accountId);
    const step = await this.matchingStep(doc.secret, code.replace(/\s/g, ''));
    if (step === undefined || !(await this.store.acceptStep(accountId, step, true, this.now()))) return null;
    // Right: its point back (a guesser's earlier wrong codes at the sign-in stay counted).
    await this.attempts.reward(String(accountId), 1).catch(() => undefined);
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.store.setRecovery(accountId, recoveryCodes.map(hashRecoveryCode));
    return recoveryCodes;
  }

  /**
   * The second factor of a sign-in: a 6-digit code from the app, or a recovery code (spent).
   * Returns how it was proven, or null when wrong; MfaLimited after too many wrong ones.
   */
  async verify(accountId: number, input: string): Promise<'totp' | 'recovery' | null> {
    const doc = await this.store.find(accountId);
    if (!doc?.active) return null;
    await this.spendAttempt(accountId);
    const typed = input.replace(/[\s-]/g, '').toLowerCase();
    let proven: 'totp' | 'recovery' | null = null;
    if (/^\d{6}$/.test(typed)) {
      const step = await this.matchingStep(doc.secret, typed);
      if (step !== undefined && (await this.store.acceptStep(accountId, step, false, this.now()))) proven = 'totp';
      // Sealed under a cookie key that is no longer the first (a rotation): sealed again under it,
      // so retiring the old key later loses nothing.
      const opened = this.openWithIndex(doc.secret);
      if (proven && opened && opened.index > 0) await this.store.reseal(accountId, this.seal(opened.secret));
    } else if (/^[a-z2-7]{10}$/.test(typed) && (await this.store.spendRecovery(accountId, hashRecoveryCode(typed)))) {
      proven = 'recovery';
    }
    if (!proven) return null;
    // The second factor itself was proven: the account's count starts over.
    await this.attempts.delete(String(accountId)).catch(() => undefined);
    return proven;
  }

  async isActive(accountId: number): Promise<boolean> {
    return (await this.store.find(accountId))?.active === true;
  }

  /** Removes the account's second factor (the operators' `campus accounts mfa reset`, or the owner). */
  async reset(accountId: number): Promise<boolean> {
    return this.store.delete(accountId);
  }

  /** Spends one of the account's checks before a code is looked at; MfaLimited when none is left. */
  private async spendAttempt(accountId: number): Promise<void> {
    try {
      await this.attempts.consume(String(accountId));
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      throw new MfaLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
    }
  }

  /** The time step `code` matches within the tolerance, or undefined. */
  private async matchingStep(sealed: string, code: string): Promise<number | undefined> {
    const secret = this.open(sealed);
    if (!secret || !/^\d{6}$/.test(code)) return undefined;
    const epoch = Math.floor(this.now().getTime() / 1000);
    const result = await verify({ secret, token: code, epoch, epochTolerance: TOLERANCE_SECONDS, ...TOTP });
    // The step the code belongs to: the current one, moved by how far the code's clock was off.
    return result.valid ? Math.floor(epoch / TOTP.period) + result.delta : undefined;
  }

  private seal(secret: string): string {
    const [key] = this.keys;
    if (!key) throw new Error('no key');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The secret, or undefined when none of the cookie keys sealed it (a key was retired: recovery codes still work). */
  private open(sealed: string): string | undefined {
    return this.openWithIndex(sealed)?.secret;
  }

  private openWithIndex(sealed: string): { secret: string; index: number } | undefined {
    const raw = Buffer.from(sealed, 'base64url');
    for (const [index, key] of this.keys.entries()) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return { secret: Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'), index };
      } catch {
        // Not this key: try the next one.
      }
    }
    return undefined;
  }
}

/** A recovery code: 10 base32 letters (50 bits), shown as `abcde-fghij`. */
function newRecoveryCode(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(10);
  const letters = [...bytes].map((b) => alphabet[b % 32]).join('');
  return `${letters.slice(0, 5)}-${letters.slice(5)}`;
}

/** Recovery codes are stored as SHA-256 of their letters (lower case, no dash): 50 random bits need no slow hash per guess, the guesses being limited. */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code.replace(/[\s-]/g, '').toLowerCase()).digest('hex');
}
