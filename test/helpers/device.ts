import { CookieJar } from './oauth.js';

/** What a person's walk through /device met: every status and page, and the last page. */
export interface DeviceWalk {
  readonly statuses: number[];
  readonly pages: string[];
  /** The last page's HTML (the success page, or where the walk stopped). */
  readonly last: string;
  readonly lastStatus: number;
  readonly jar: CookieJar;
}

/** The hidden anti-forgery field of /device's forms (oidc-provider's `xsrf`). */
export function xsrfOf(html: string): string {
  return /name="xsrf" value="([^"]*)"/.exec(html)?.[1] ?? '';
}

/** GET /device as a phone's browser: its page and cookies. */
export async function openDevicePage(
  base: string,
  jar = new CookieJar(),
  query = '',
): Promise<{ res: Response; html: string; jar: CookieJar }> {
  const res = await fetch(`${base}/device${query}`, { headers: { cookie: jar.header() }, redirect: 'manual' });
  jar.store(res);
  return { res, html: await res.text(), jar };
}

/** POSTs /device's form (the code typed, confirmed or cancelled) with the page's cookies. */
export async function postDevice(base: string, jar: CookieJar, fields: Record<string, string>): Promise<{ res: Response; html: string }> {
  const res = await fetch(`${base}/device`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header(), origin: base },
    body: new URLSearchParams(fields).toString(),
  });
  jar.store(res);
  return { res, html: await res.text() };
}

/**
 * A person approving a device as a browser without JavaScript would: types `userCode` at /device,
 * confirms the app, signs in, answers the consent page, and stops at the page that ends it.
 */
export async function approveDevice(
  base: string,
  userCode: string,
  user: { email: string; password: string },
  options: { consent?: 'allow' | 'deny'; jar?: CookieJar } = {},
): Promise<DeviceWalk> {
  const jar = options.jar ?? new CookieJar();
  const statuses: number[] = [];
  const pages: string[] = [];
  const opened = await openDevicePage(base, jar);
  statuses.push(opened.res.status);
  pages.push(opened.html);
  const typed = await postDevice(base, jar, { xsrf: xsrfOf(opened.html), user_code: userCode });
  statuses.push(typed.res.status);
  pages.push(typed.html);
  if (typed.res.status !== 200 || !typed.html.includes('name="confirm"'))
    return { statuses, pages, last: typed.html, lastStatus: typed.res.status, jar };
  let res = (await postDevice(base, jar, { xsrf: xsrfOf(typed.html), user_code: userCode, confirm: 'yes' })).res;
  for (let hop = 0; hop < 15; hop++) {
    statuses.push(res.status);
    const location = res.headers.get('location');
    if (location) {
      await res.arrayBuffer().catch(() => undefined);
      res = await fetch(new URL(location, base), { headers: { cookie: jar.header() }, redirect: 'manual' });
      jar.store(res);
      continue;
    }
    const html = await res.text();
    pages.push(html);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!csrf || !action || res.status !== 200) return { statuses, pages, last: html, lastStatus: res.status, jar };
    const fields: Record<string, string> = html.includes('name="password"')
      ? { csrf, email: user.email, password: user.password }
      : { csrf, decision: options.consent ?? 'allow' };
    res = await fetch(new URL(action, base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header(), origin: base },
      body: new URLSearchParams(fields).toString(),
    });
    jar.store(res);
  }
  throw new Error('too many steps approving the device');
}
