import type { TLSSocket } from 'node:tls';
import { errorEnvelope } from './envelope.js';
import type { AppMiddleware } from './context.js';

/**
 * Production accepts only TLS: directly, or through a trusted proxy that says so in
 * X-Forwarded-Proto. Plain HTTP is for local development only (the spec).
 */
export function requireTls(trustedProxies: readonly string[]): AppMiddleware {
  const trusted = new Set(trustedProxies.map(normaliseAddress));
  return async (ctx, next) => {
    const direct = Boolean((ctx.req.socket as TLSSocket).encrypted);
    const viaProxy =
      trusted.has(normaliseAddress(ctx.req.socket.remoteAddress ?? '')) &&
      ctx.get('X-Forwarded-Proto').split(',')[0]?.trim().toLowerCase() === 'https';
    if (direct || viaProxy) return next();
    ctx.status = 403;
    ctx.body = errorEnvelope(403, 'HTTPS is required: this service accepts plain HTTP only in local development.');
  };
}

function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * Koa believes X-Forwarded-* when `proxy` is on; only a configured proxy may set them, so
 * they are removed from requests that come from anywhere else.
 */
export function trustForwardingFrom(trustedProxies: readonly string[]): AppMiddleware {
  const trusted = new Set(trustedProxies.map(normaliseAddress));
  return async (ctx, next) => {
    if (!trusted.has(normaliseAddress(ctx.req.socket.remoteAddress ?? ''))) {
      for (const name of Object.keys(ctx.req.headers)) {
        if (name.startsWith('x-forwarded-')) delete ctx.req.headers[name];
      }
    }
    await next();
  };
}
