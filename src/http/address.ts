/**
 * The budget key of a client address: IPv4 as it is, IPv6 by its /64, which one subscriber
 * usually holds whole (so one household or school cannot multiply a per-address budget by
 * walking its own prefix). Every per-address budget keys by it: the data API's rate limits
 * (./rate-limit.ts), the login throttle and the self-service budgets (src/oauth/).
 * Every spelling of one address gives one key (`2001:DB8:0::1` and `2001:db8::1`), and an IPv4
 * client seen through an IPv6 socket (`::ffff:192.0.2.1`) is that IPv4 address.
 */
export function addressKey(address: string): string {
  const groups = address.includes(':') ? ipv6Groups(address) : undefined;
  if (!groups) return address;
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = groups;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff) return [g >> 8, g & 0xff, h >> 8, h & 0xff].join('.');
  return [a, b, c, d].map((group) => group.toString(16)).join(':');
}

/**
 * The eight 16-bit groups of an IPv6 address, or undefined for anything else (kept as it is). The
 * URL parser (WHATWG) reads every form, IPv4 tails included, and writes the one of RFC 5952.
 */
function ipv6Groups(address: string): number[] | undefined {
  // A link-local address's zone (`fe80::1%eth0`) names the server's interface, not the client.
  const [bare = ''] = address.split('%');
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const [head = '', tail] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16));
}
