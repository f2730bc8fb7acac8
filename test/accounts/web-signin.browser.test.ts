import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS } from '../helpers/browser.js';
import { createAccount } from '../helpers/oauth.js';

/**
 * The consoles' sign-in (src/surfaces/web/): the authorization-code flow with PKCE against our
 * own authorization server, a browser-session cookie tied to the grant, roles, sign-out.
 */
describe('accounts and sign-in: the consoles sign in through our own authorization server', function () {
  this.timeout(60000);
  let t: TestApp;
  let browser: Browser;
  const staff = { email: 'staff@school.test', password: 'staff password 1' };
  const student = { email: 'student@school.test', password: 'student password 1' };

  before(async () => {
    t = await buildTestApp('web_signin');
    await createAccount(t.db, staff.email, staff.password);
    await t.db.models.accounts.updateOne({ email: staff.email }, { $set: { role: 'ADMIN' } });
    await createAccount(t.db, student.email, student.password);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an anonymous visit is sent to sign in, and comes back signed in with a browser-session cookie', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: 'ko-KR' });
    const page = await context.newPage();
    await signIn(page, t.url, '/admin', staff);
    expect(new URL(page.url()).pathname).to.equal('/admin');
    expect(await page.textContent('h1')).to.equal('관리자 콘솔');
    expect(await page.textContent('header .who')).to.include(staff.email);
    const cookie = (await context.cookies()).find((c) => c.name === 'campus_web');
    expect(cookie?.httpOnly).to.equal(true);
    expect(cookie?.sameSite).to.equal('Lax');
    expect(cookie?.expires).to.equal(-1); // a session cookie: it ends with the browser
    await screenshot(page, 'web-admin-home-desktop');
    await context.close();
  });

  it('a USER account is refused the admin console (403 page) but may use the developer console', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.phone, locale: 'en-US' });
    const page = await context.newPage();
    await signIn(page, t.url, '/console', student);
    expect(new URL(page.url()).pathname).to.equal('/console');
    expect(await page.textContent('h1')).to.equal('Developer console');
    const admin = await page.goto(`${t.url}/admin`);
    expect(admin?.status()).to.equal(403);
    expect(await page.textContent('main')).to.include(
      `The account ${student.email} cannot open this page. It needs the role Administrator or Root administrator.`,
    );
    // Not a dead end: the way back leads home and to the developer console (no admin console for a USER).
    expect(await page.locator('main nav.way-back a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).to.deep.equal([
      '/',
      '/console',
    ]);
    await screenshot(page, 'web-admin-refused-phone-en');
    await context.close();
  });

  it('signing out ends the grant and the sign-in at the authorization server in one step: the old cookie no longer opens a page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.url, '/console', student);
    const cookies = await context.cookies();
    // No confirmation page in between: straight to "signed out".
    await Promise.all([page.waitForURL(/\/web\/signed-out$/), page.click('header form button')]);
    expect(await page.textContent('h1')).to.match(/로그아웃되었습니다|Signed out/);
    // The same browser opening the console again is asked for the password.
    await page.goto(`${t.url}/console`);
    expect(page.url()).to.include('/v1/oauth/interaction/');
    expect(await page.locator('#f-password').count()).to.equal(1);
    // The old cookie, replayed: its grant is gone, so it is sent to sign in again.
    const jar = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const replay = await t.request('/console', { headers: { cookie: jar }, redirect: 'manual' });
    expect(replay.status).to.equal(303);
    expect(replay.headers.get('location')).to.equal('/web/signin?next=%2Fconsole');
    await context.close();
  });

  it('a form post without the session CSRF token, or from another origin, is refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.url, '/console', student);
    const jar = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const noToken = await t.request('/web/signout', {
      method: 'POST',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=nope',
      redirect: 'manual',
    });
    expect(noToken.status).to.equal(403);
    const csrf = await page.getAttribute('header form input[name=csrf]', 'value');
    const crossSite = await t.request('/web/signout', {
      method: 'POST',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: `csrf=${encodeURIComponent(csrf ?? '')}`,
      redirect: 'manual',
    });
    expect(crossSite.status).to.equal(403);
    // Still signed in: neither post ended the session.
    expect((await t.request('/console', { headers: { cookie: jar }, redirect: 'manual' })).status).to.equal(200);
    await context.close();
  });
});
