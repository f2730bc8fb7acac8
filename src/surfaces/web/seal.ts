import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Sealed cookies of our own pages (the session, the sign-in in progress, the flash): AES-256-GCM,
 * so their content can be neither read nor changed by the browser. The first cookie key seals;
 * every key opens (OAUTH_COOKIE_KEYS rotate the same way oidc-provider's do: new key first, old
 * keys kept until their cookies are gone). Each purpose has keys of its own, so a cookie sealed
 * for one purpose never opens as another.
 */
export class CookieSealer {
  private readonly keys: Buffer[];

  constructor(cookieKeys: readonly string[], purpose: string) {
    if (cookieKeys.length === 0) throw new Error('no cookie keys: the web pages cannot protect their cookies');
    this.keys = cookieKeys.map((key) => createHash('sha256').update(`campus-web:${purpose}:${key}`).digest());
  }

  seal(value: unknown): string {
    const [key] = this.keys;
    if (!key) throw new Error('no cookie key');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The sealed value, or undefined when the text was not sealed by one of our keys. */
  open(text: string | undefined): unknown {
    if (!text) return undefined;
    const raw = Buffer.from(text, 'base64url');
    if (raw.length < 29) return undefined;
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as unknown;
      } catch {
        // Not this key: try the next one.
      }
    }
    return undefined;
  }
}
