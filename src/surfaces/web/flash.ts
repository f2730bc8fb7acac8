import { z } from 'zod';
import type { AppContext } from '../../http/context.js';
import { cookieName } from '../../oauth/constants.js';
import type { CookieSealer } from './seal.js';

const flashSchema = z.object({
  kind: z.enum(['ok', 'error']),
  text: z.string(),
  /** A value shown once (a new API key, a client secret): never in an address, a log or the server's memory. */
  secret: z.object({ label: z.string(), value: z.string() }).optional(),
  /** Ready-to-copy text shown with it (a curl with the new key, the example app's settings): as private as the secret. */
  snippets: z
    .array(z.object({ label: z.string(), code: z.string() }))
    .max(4)
    .optional(),
});
/** A one-time message after a change, shown by the page the change redirects to. */
export type Flash = z.infer<typeof flashSchema>;

const FLASH_COOKIE = 'campus_flash';
/** A flash not shown within this time is dropped (the redirect follows at once). */
const FLASH_LIFETIME_MS = 60_000;

/**
 * The one way our pages say something after a redirect (post/redirect/get): the POST seals the
 * flash in a cookie (AES-GCM: the browser can neither read nor forge it), the GET it redirects to
 * shows it in the shell and clears it, so a reload does not show it again.
 */
export class Flashes {
  constructor(
    private readonly sealer: CookieSealer,
    private readonly secure: boolean,
    private readonly now: () => Date,
  ) {}

  set(ctx: AppContext, flash: Flash): void {
    ctx.cookies.set(
      cookieName(FLASH_COOKIE, this.secure),
      this.sealer.seal({ flash, expiresAt: this.now().getTime() + FLASH_LIFETIME_MS }),
      this.options(),
    );
  }

  /** The flash of this request, cleared. */
  take(ctx: AppContext): Flash | undefined {
    const raw = ctx.cookies.get(cookieName(FLASH_COOKIE, this.secure));
    if (!raw) return undefined;
    ctx.cookies.set(cookieName(FLASH_COOKIE, this.secure), '', { ...this.options(), maxAge: 0 });
    const parsed = z.object({ flash: flashSchema, expiresAt: z.number() }).safeParse(this.sealer.open(raw));
    return parsed.success && parsed.data.expiresAt > this.now().getTime() ? parsed.data.flash : undefined;
  }

  private options() {
    return { httpOnly: true, sameSite: 'strict' as const, secure: this.secure, path: '/', overwrite: true };
  }
}
