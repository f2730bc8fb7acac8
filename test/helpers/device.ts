import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import type { TestApp } from './app.js';
import { buildStudent, insertSchool } from './factories.js';
import { CookieJar, createAccount, createClient } from './oauth.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * A student with an account, and a device app (a screen: a public app that signs in only by
 * device, with no redirect address); the app's client id.
 */
export async function seedDeviceApp(
  db: Database,
  person: { id: number; name: string; email: string; password: string },
  app: { name: string; scopes: string[] },
): Promise<string> {
  await insertSchool(db, { students: [buildStudent({ _id: person.id, email: person.email, name: person.name })] });
  await createAccount(db, person.email, person.password);
  return (await createClient(db, { ...app, public: true, redirectUris: [], grants: ['device'] })).client.id;
}

/** The device's first request (POST /v1/oauth/device/auth): its codes, or the refusal. */
export function requestDeviceCode(t: TestApp, clientId: string, scope: string, headers: Record<string, string> = {}): Promise<Response> {
  return t.request('/v1/oauth/device/auth', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ client_id: clientId, scope }).toString(),
  });
}

/** The device's polling: POST /v1/oauth/token with its device code. */
export function pollDeviceToken(t: TestApp, deviceCode: string, clientId: string): Promise<Response> {
  return t.request('/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }).toString(),
  });
}

/** Lets ten minutes pass for one user code: its record, and its expiry as the provider reads it. */
export async function expireDeviceCode(db: Database, userCode: string): Promise<void> {
  const record = await db.models.oauthRecords.findOne({ kind: 'DeviceCode', userCode: userCode.replace('-', '') }).lean();
  expect(record, `the device code ${userCode}`).to.not.equal(null);
  const payload = JSON.parse(record?.payload ?? '{}') as Record<string, unknown>;
  const past = Math.floor(Date.now() / 1000) - 1;
  await db.models.oauthRecords.updateOne(
    { _id: record?._id },
    { $set: { payload: JSON.stringify({ ...payload, exp: past }), expiresAt: new Date(past * 1000) } },
  );
}

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
