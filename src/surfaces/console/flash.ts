import type { AppContext } from '../../http/context.js';
import { CookieSealer } from '../web/session.js';

/** A one-time message after a change (post/redirect/get), and a value to show once (a new key or secret). */
export interface Flash {
  readonly kind: 'ok' | 'error';
  readonly text: string;
  readonly secret?: { readonly label: string; readonly value: string };
}

const FLASH_COOKIE = 'campus_flash';
/** A flash not shown within this time is dropped (the redirect follows at once). */
const FLASH_LIFETIME_MS = 60_000;

/**
 * Flash messages of the consoles: sealed in a cookie (AES-GCM, like the session: the browser can
 * neither read nor forge it) by the POST, shown and cleared by the GET it redirects to. A value
 * shown once travels this way too, so it is never in an address, a log or the server's memory.
 */
export class Flashes {
  private readonly sealer: CookieSealer;

  constructor(
    cookieKeys: readonly string[],
    private readonly secure: boolean,
    private readonly now: () => Date,
  ) {
    this.sealer = new CookieSealer(cookieKeys, 'flash');
  }

  set(ctx: AppContext, flash: Flash): void {
    ctx.cookies.set(FLASH_COOKIE, this.sealer.seal({ ...flash, expiresAt: this.now().getTime() + FLASH_LIFETIME_MS }), {
      httpOnly: true,
      sameSite: 'strict',
      secure: this.secure,
      path: '/',
      overwrite: true,
    });
  }

  /** The flash of this request, cleared so that a reload does not show it again. */
  take(ctx: AppContext): Flash | undefined {
    const raw = ctx.cookies.get(FLASH_COOKIE);
    if (!raw) return undefined;
    ctx.cookies.set(FLASH_COOKIE, '', { httpOnly: true, sameSite: 'strict', secure: this.secure, path: '/', maxAge: 0, overwrite: true });
    const value = this.sealer.open(raw);
    return isFlash(value) && value.expiresAt > this.now().getTime()
      ? { kind: value.kind, text: value.text, ...(value.secret ? { secret: value.secret } : {}) }
      : undefined;
  }
}

function isFlash(value: unknown): value is Flash & { expiresAt: number } {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const secret = v['secret'] as Record<string, unknown> | undefined;
  return (
    (v['kind'] === 'ok' || v['kind'] === 'error') &&
    typeof v['text'] === 'string' &&
    typeof v['expiresAt'] === 'number' &&
    (secret === undefined || (typeof secret['label'] === 'string' && typeof secret['value'] === 'string'))
  );
}
