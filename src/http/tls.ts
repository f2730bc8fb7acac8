import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ForbiddenError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from './context.js';
import { METRICS_PATH, PROBE_PATHS } from './probes.js';

/**
 * HTTP Strict Transport Security (RFC 6797): browsers that saw it use only HTTPS for this host
 * (and hosts below it) for a year, so a login page can never be fetched over plain HTTP again.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/** The paths plain HTTP may reach in production, and only from loopback and TRUSTED_PROXIES. */
const PLAIN_HTTP_PATHS: ReadonlySet<string> = new Set([...Object.values(PROBE_PATHS), METRICS_PATH]);

/**
 * Production accepts only TLS: directly, or through a trusted proxy that says so in
 * X-Forwarded-Proto. Plain HTTP is for local development only (docs/spec.md), with one
 * exception: the probes (/livez, /readyz, src/http/probes.ts) and Prometheus's /metrics
 * (src/http/metrics.ts) from this machine or a trusted proxy, because load balancers,
 * orchestrators and scrapers check a process over plain HTTP; they carry nothing secret. Every answer carries Strict-Transport-Security;
 * it is set on the Node response before any surface runs, so the answers oidc-provider writes
 * itself carry it too (browsers ignore it over plain HTTP).
 */
export function requireTls(trustedProxies: readonly string[]): AppMiddleware {
  const trusted = new Set(trustedProxies.map(normaliseAddress));
  const local = fromLoopbackOrProxy(trustedProxies);
  return async (ctx, next) => {
    ctx.set('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
    const from = normaliseAddress(ctx.req.socket.remoteAddress ?? '');
    const direct = Boolean((ctx.req.socket as TLSSocket).encrypted);
    const viaProxy = trusted.has(from) && ctx.get('X-Forwarded-Proto').split(',')[0]?.trim().toLowerCase() === 'https';
    if (direct || viaProxy) return next();
    if (PLAIN_HTTP_PATHS.has(ctx.path) && local(ctx)) return next();
    throw new ForbiddenError('HTTPS is required: this service accepts plain HTTP only in local development.');
  };
}

/**
 * The one rule for operational paths in production: the connection comes from this machine
 * (loopback) or from one of TRUSTED_PROXIES. The TLS rule above lets the probes and /metrics
 * through plain HTTP by it; /metrics also refuses everyone else by it (src/http/metrics.ts).
 */
export function fromLoopbackOrProxy(trustedProxies: readonly string[]): (ctx: AppContext) => boolean {
  const trusted = new Set(trustedProxies.map(normaliseAddress));
  return (ctx) => {
    const from = normaliseAddress(ctx.req.socket.remoteAddress ?? '');
    return isLoopback(from) || trusted.has(from);
  };
}

function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** 127.0.0.0/8 and ::1: the machine itself (a sidecar, the container's own HEALTHCHECK). */
export function isLoopback(address: string): boolean {
  const normal = normaliseAddress(address);
  if (isIP(normal) === 4) return normal.startsWith('127.');
  return normal === '::1';
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
