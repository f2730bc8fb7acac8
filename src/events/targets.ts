import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { BadRequestError } from '../errors/index.js';

/*
 * Where a webhook may be sent (docs/webhooks.md, "Safe targets"): https in production; never to
 * a cloud metadata address; never to loopback, private, link-local, shared or other special
 * addresses unless WEBHOOK_ALLOW_PRIVATE (on by default outside production, for receivers on the
 * developer's machine). The address is checked where the connection is made (`safeLookup`, given
 * to http.request as its `lookup`), so a name that resolved to a public address when the webhook
 * was saved and to 127.0.0.1 at delivery (DNS rebinding) is refused; an address written as an IP
 * literal is never looked up, so `refuseAddress` checks it before the request.
 */

/** What a target is checked against. */
export interface TargetPolicy {
  readonly production: boolean;
  readonly allowPrivate: boolean;
}

/** Thrown when a webhook's address is not one it may be sent to. */
export class UnsafeTargetError extends BadRequestError {}

/** The longest webhook address taken. */
export const MAX_URL_LENGTH = 2000;

/** Cloud instance metadata (AWS, GCP, Azure, Oracle: 169.254.169.254; Alibaba; Azure's wire server; AWS over IPv6): refused always. */
const METADATA = new BlockList();
for (const address of ['169.254.169.254', '100.100.100.200', '168.63.129.16']) METADATA.addAddress(address, 'ipv4');
METADATA.addAddress('fd00:ec2::254', 'ipv6');

/** Addresses that are not the public internet: refused unless private targets are allowed. */
const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  SPECIAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64 of IPv4 addresses
] as const) {
  SPECIAL.addSubnet(net, prefix, 'ipv6');
}

/** IPv4 written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match?.[1] ?? address;
}

/** Why an address may not be connected to, or null when it may. */
export function refusedReason(address: string, policy: TargetPolicy): string | null {
  const ip = unmapped(address);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (METADATA.check(ip, family)) return `${address} is a cloud metadata address`;
  if (!policy.allowPrivate && SPECIAL.check(ip, family)) {
    return `${address} is a loopback, private, link-local or reserved address (WEBHOOK_ALLOW_PRIVATE is off)`;
  }
  return null;
}

/** Throws UnsafeTargetError when `address` (an IP) may not be connected to. */
export function refuseAddress(address: string, policy: TargetPolicy): void {
  const reason = refusedReason(address, policy);
  if (reason) throw new UnsafeTargetError(`url: ${reason}.`);
}

/**
 * Checks a webhook address as it is saved: an absolute http(s) URL (https in production), no
 * user name or password in it, and, when its host is an IP literal, an address it may reach.
 * Names are checked again at every delivery on the address connected to.
 */
export function checkTargetUrl(value: string, policy: TargetPolicy): URL {
  if (value.length > MAX_URL_LENGTH) throw new UnsafeTargetError(`url: at most ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UnsafeTargetError('url: must be an absolute address such as https://app.example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UnsafeTargetError('url: must start with https:// (or http:// outside production).');
  if (policy.production && url.protocol !== 'https:') throw new UnsafeTargetError('url: must be an https:// address in production.');
  if (url.username || url.password)
    throw new UnsafeTargetError('url: must not hold a user name or password; the signature authenticates the sender.');
  const host = hostOf(url);
  if (isIP(host)) refuseAddress(host, policy);
  return url;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves the name, then refuses the connection when any of its
 * addresses may not be reached (so the socket is only ever opened to an address that was checked).
 */
export function safeLookup(policy: TargetPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, ...(typeof options.family === 'number' ? { family: options.family } : {}) }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const { address } of addresses) {
        const reason = refusedReason(address, policy);
        if (reason) return callback(new UnsafeTargetError(`url: ${hostname} resolves to ${reason}.`), []);
      }
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}
