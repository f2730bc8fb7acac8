import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, VIEWPORTS, wcagViolations } from '../helpers/browser.js';
import { expireDeviceCode, pollDeviceToken, requestDeviceCode, seedDeviceApp } from '../helpers/device.js';

/**
 * Device sign-in end to end in Chromium: a device (here the test, as a command-line tool would)
 * starts the flow; a person on a phone (390 px) opens /device, types a wrong code and an expired
 * one (both refused at the field), then the right one, confirms the app, signs in, consents, and
 * the device's polling gets its tokens. Each page passes axe-core's WCAG 2.2 AA rules, in Korean
 * and English, at phone and desktop width (`npm run screenshots` saves them).
 */

const USER = { email: 'screen.owner@school.test', password: 'screen owner password' };

describe('OAuth apps: device sign-in in Chromium at phone width', function () {
  this.timeout(120_000);
  let t: TestApp;
  let browser: Browser;
  let device: string;

  before(async () => {
    t = await buildTestApp('oauth_device_browser');
    device = await seedDeviceApp(
      t.db,
      { id: 21, name: '정하늘', ...USER },
      { name: '급식실 화면', scopes: ['openid', 'profile', 'email'] },
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  /** The device's side: a new user code (and its device code). */
  async function startDevice(): Promise<{ device_code: string; user_code: string }> {
    const res = await requestDeviceCode(t, device, 'openid profile email');
    expect(res.status).to.equal(200);
    return (await res.json()) as { device_code: string; user_code: string };
  }

  async function poll(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await pollDeviceToken(t, deviceCode, device);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function checked(page: Page, name: string, width: number): Promise<void> {
    expect(await wcagViolations(page), name).to.deep.equal([]);
    // Usable at phone width: nothing wider than the screen.
    expect(Number(await page.evaluate('document.documentElement.scrollWidth')), `${name} scrolls sideways`).to.be.at.most(width);
    await screenshot(page, name);
  }

  const words = {
    ko: {
      wrong: '코드가 맞지 않습니다.',
      expired: '코드가 만료되었습니다.',
      confirm: '계속',
      allow: '허용',
      done: '급식실 화면 앱에 로그인했습니다.',
    },
    en: {
      wrong: 'That code is not right.',
      expired: 'That code has expired.',
      confirm: 'Continue',
      allow: 'Allow',
      done: 'You signed in to 급식실 화면.',
    },
  } as const;

  for (const [lang, viewport] of [
    ['ko', 'phone'],
    ['en', 'phone'],
    ['ko', 'desktop'],
    ['en', 'desktop'],
  ] as const) {
    it(`${lang}, ${viewport}: a wrong code and an expired code are refused; the right one signs the device in`, async () => {
      const w = words[lang];
      const expired = await startDevice();
      await expireDeviceCode(t.db, expired.user_code);
      const started = await startDevice();
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
      const page = await context.newPage();
      try {
        await page.goto(`${t.url}/device`);
        expect(await page.getAttribute('html', 'lang')).to.equal(lang);
        await checked(page, `device-code-${lang}-${viewport}`, VIEWPORTS[viewport].width);

        await page.fill('#f-user_code', 'bcdf ghjk');
        await page.click('button.primary');
        expect(await page.textContent('#f-user_code-error')).to.include(w.wrong);
        await checked(page, `device-wrong-${lang}-${viewport}`, VIEWPORTS[viewport].width);

        await page.fill('#f-user_code', expired.user_code);
        await page.click('button.primary');
        expect(await page.textContent('#f-user_code-error')).to.include(w.expired);
        await checked(page, `device-expired-${lang}-${viewport}`, VIEWPORTS[viewport].width);

        // Typed in lower case without the dash: still the code.
        await page.fill('#f-user_code', started.user_code.toLowerCase().replace('-', ''));
        await page.click('button.primary');
        expect(await page.textContent('#user-code')).to.equal(started.user_code);
        expect(await page.textContent('main')).to.include('급식실 화면');
        await checked(page, `device-confirm-${lang}-${viewport}`, VIEWPORTS[viewport].width);
        expect((await poll(started.device_code)).body['error']).to.equal('authorization_pending');

        await page.getByRole('button', { name: w.confirm, exact: true }).click();
        await page.waitForURL((url) => url.pathname.startsWith('/v1/oauth/interaction/'));
        await page.fill('#f-email', USER.email);
        await page.fill('#f-password', USER.password);
        await page.click('button.primary');
        await page.getByRole('button', { name: w.allow, exact: true }).click();
        await page.waitForURL((url) => url.pathname.startsWith('/device/'));
        expect(await page.textContent('[role="status"]')).to.include(w.done);
        await checked(page, `device-done-${lang}-${viewport}`, VIEWPORTS[viewport].width);
      } finally {
        await context.close();
      }
      const tokens = await poll(started.device_code);
      expect(tokens.status).to.equal(200);
      expect(tokens.body).to.include.keys('access_token', 'refresh_token', 'id_token');
      expect((await poll(expired.device_code)).body['error']).to.equal('expired_token');
    });
  }
});
