import { expect } from 'chai';
import { generate } from 'otplib';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { launchChromium, screenshot, signIn, VIEWPORTS, wcagViolations } from '../helpers/browser.js';
import { createClient, pkcePair } from '../helpers/oauth.js';
import { buildLocalhostApp } from '../helpers/passkeys.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { MfaService } from '../../src/oauth/second-factor.js';
import { loadOAuthKeys } from '../../src/oauth/signing-keys.js';

/**
 * Passkeys in a real Chromium, with the DevTools virtual authenticator (CTAP2, built in, resident
 * keys, user verification): a student adds one in /console/account, signs out, and signs in
 * through an app's authorization with it from the email field's suggestions (conditional
 * mediation), consent and code as usual; removed, it signs in no more. Under ADMIN_MFA=passkey a
 * staff account with only a passkey opens /admin (signing in with it alone, or after its password)
 * and one with only a TOTP app does not, until it adds a passkey. Screenshots of each page at 390
 * and 1280 px, Korean and English; axe-core on each.
 */

const PASSWORD = 'a long pass phrase for passkeys';

/** The virtual authenticator of a page's browser (CDP WebAuthn domain). */
interface Authenticator {
  readonly cdp: CDPSession;
  readonly id: string;
  credentials(): Promise<number>;
  /** Whether it answers at once (a person touching the sensor) or lets requests wait. */
  presence(enabled: boolean): Promise<void>;
}

async function virtualAuthenticator(context: BrowserContext, page: Page): Promise<Authenticator> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    cdp,
    id: authenticatorId,
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length,
    presence: async (enabled) => {
      await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled });
    },
  };
}

/** The `mediation` of every navigator.credentials.get the pages make ('conditional': the email field's suggestions). */
async function recordMediations(page: Page): Promise<string[]> {
  const mediations: string[] = [];
  await page.exposeFunction('recordMediation', (mediation: string) => mediations.push(mediation));
  // A string: the project's TypeScript has no DOM types (the page's own code is JavaScript).
  await page.addInitScript(`{
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (options) => {
      void window.recordMediation(options?.mediation ?? 'optional');
      return get(options);
    };
  }`);
  return mediations;
}

/**
 * The mediations asked for so far, once at least one is recorded: the page's call reaches this
 * process through the exposed binding a moment after the page has moved on.
 */
async function mediationsAsked(mediations: string[]): Promise<string[]> {
  const until = Date.now() + 5000;
  while (mediations.length === 0 && Date.now() < until) await new Promise((done) => setTimeout(done, 20));
  return mediations;
}

describe('accounts and sign-in: passkeys in a browser (virtual authenticator), phone and desktop, Korean and English', function () {
  this.timeout(300000);
  let t: TestApp;
  let browser: Browser;
  let clientId: string;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);

  before(async () => {
    t = await buildLocalhostApp('browser_passkeys', { env: { ADMIN_MFA: 'passkey' }, now });
    browser = await launchChromium();
    clientId = (await createClient(t.db, { name: '동아리 출석부', redirectUris: [`${t.url}/dev/callback`] })).client.id;
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function account(email: string, role: 'USER' | 'ADMIN' = 'USER'): Promise<{ id: number; email: string; password: string }> {
    const created = await new AccountService(t.db).create({ email, password: PASSWORD, role });
    return { id: created.id, email, password: PASSWORD };
  }

  /** Screenshots of the page as it is, at 390 and 1280 px (nothing scrolls sideways), and axe-core's WCAG 2.2 AA check. */
  async function look(page: Page, name: string, lang: string): Promise<void> {
    expect(await wcagViolations(page), name).to.deep.equal([]);
    for (const viewport of ['phone', 'desktop'] as const) {
      await page.setViewportSize(VIEWPORTS[viewport]);
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width, `${name} scrolls sideways at ${viewport}`).to.be.at.most(VIEWPORTS[viewport].width);
      await screenshot(page, `passkeys-${name}-${viewport}-${lang}`);
    }
  }

  /** Adds a passkey in /console/account (the person is signed in): name, password (or code), the browser's ceremony. */
  async function addPasskey(page: Page, lang: string, name: string, current: string, shots = false): Promise<void> {
    await page.goto(`${t.url}/console/account?lang=${lang}`);
    await page.click('a[href="/console/account/passkeys/new"]');
    await page.waitForSelector('#f-name');
    if (shots) await look(page, 'new', lang);
    await page.fill('#f-name', name);
    await page.fill('#f-current', current);
    await page.click('button.primary');
    await page.waitForSelector('#f-passkey');
    expect(await page.locator('#f-passkey').isVisible()).to.equal(true);
    expect(await page.locator('[data-passkey-unsupported]').isVisible()).to.equal(false);
    if (shots) await look(page, 'create', lang);
    await Promise.all([page.waitForURL((url) => url.pathname === '/console/account'), page.click('#f-passkey')]);
    expect(await page.locator('.flash.ok').innerText()).to.include(name);
  }

  async function signOut(page: Page): Promise<void> {
    await Promise.all([page.waitForURL('**/web/signed-out'), page.click('form[action="/web/signout"] button')]);
  }

  function authorizeUrl(lang: string): string {
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: `${t.url}/dev/callback`,
      response_type: 'code',
      scope: 'self:read',
      state: `st-${lang}`,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ui_locales: lang,
    });
    return `${t.url}/v1/oauth/authorize?${query}`;
  }

  for (const lang of ['ko', 'en'] as const) {
    it(`${lang}: a student adds a passkey, signs in through an app with it from the email field (consent, code), and removed it signs in no more`, async () => {
      const student = await account(`passkey-student-${lang}@gsm.hs.kr`);
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
      const page = await context.newPage();
      try {
        const authenticator = await virtualAuthenticator(context, page);
        const mediations = await recordMediations(page);
        await signIn(page, t.url, `/console/account?lang=${lang}`, student);
        expect(await page.locator('section[aria-labelledby=passkeys]').innerText()).to.include(
          lang === 'ko' ? '아직 패스키가 없습니다.' : 'No passkeys yet.',
        );
        await look(page, 'account-empty', lang);
        await addPasskey(page, lang, lang === 'ko' ? '내 휴대폰' : 'My phone', PASSWORD, true);
        expect(await authenticator.credentials()).to.equal(1);
        expect(await page.locator('#passkeys ~ .table th[scope=row]').innerText()).to.equal(lang === 'ko' ? '내 휴대폰' : 'My phone');
        await look(page, 'account-added', lang);
        await signOut(page);

        // The app's authorization: the login page offers the passkey, and the email field suggests it.
        await authenticator.presence(false);
        mediations.length = 0;
        await page.goto(authorizeUrl(lang));
        await page.waitForSelector('#f-passkey');
        expect(await page.locator('#f-passkey').innerText()).to.equal(lang === 'ko' ? '패스키로 로그인' : 'Sign in with a passkey');
        await page.waitForFunction(`document.getElementById('f-email')?.getAttribute('autocomplete') === 'username webauthn'`);
        expect(await mediationsAsked(mediations)).to.deep.equal(['conditional']);
        await look(page, 'login', lang);
        // The person picks the passkey among the suggestions (the authenticator answers): no click, no password.
        await authenticator.presence(true);
        mediations.length = 0;
        await page.reload();
        await page.waitForSelector('button[name=decision][value=allow]');
        expect(await mediationsAsked(mediations)).to.deep.equal(['conditional']);
        expect(await page.locator('h1').innerText()).to.equal(lang === 'ko' ? '권한 요청' : 'Allow access');
        expect(await page.locator('main').innerText()).to.include(student.email);
        await Promise.all([page.waitForURL((url) => url.pathname === '/dev/callback'), page.click('button[name=decision][value=allow]')]);
        const callback = new URL(page.url());
        expect(callback.searchParams.get('code')).to.match(/^[\w-]{20,}$/);
        expect(callback.searchParams.get('state')).to.equal(`st-${lang}`);

        // My account: last used now; removed, the passkey signs in no more.
        await page.goto(`${t.url}/console/account?lang=${lang}`);
        await page.waitForURL((url) => url.pathname === '/console/account');
        expect(await page.locator('#passkeys ~ .table td').nth(1).innerText()).to.not.equal(lang === 'ko' ? '없음' : 'never');
        await Promise.all([page.waitForURL((url) => url.pathname === '/console/account'), page.click('#passkeys ~ .table button')]);
        expect(await page.locator('.flash.ok').innerText()).to.include(lang === 'ko' ? '패스키를 삭제했습니다' : 'Passkey removed');
        await signOut(page);
        mediations.length = 0;
        await page.goto(authorizeUrl(lang));
        await page.waitForSelector('.error-summary');
        expect(await mediationsAsked(mediations)).to.deep.equal(['conditional']);
        expect(await page.locator('.error-summary li').innerText()).to.equal(
          lang === 'ko'
            ? '이 패스키는 이 계정이나 이 서비스에 등록되어 있지 않습니다. 비밀번호로 로그인하세요.'
            : 'This passkey is not registered for this account or this service. Sign in with your password.',
        );
        // Refused, it is not suggested again at once (the button still offers a passkey); the password still signs in.
        expect(await page.locator('#f-email').getAttribute('autocomplete')).to.equal('username');
        await look(page, 'login-refused', lang);
        await page.fill('#f-email', student.email);
        await page.fill('#f-password', PASSWORD);
        await Promise.all([page.waitForSelector('button[name=decision][value=allow]'), page.click('button.primary')]);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: ADMIN_MFA=passkey: staff with only a passkey open /admin (the passkey alone, or after the password), and remove a person's passkeys`, async () => {
      const admin = await account(`passkey-admin-${lang}@gsm.hs.kr`, 'ADMIN');
      const person = await account(`passkey-person-${lang}@gsm.hs.kr`);
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
      const page = await context.newPage();
      try {
        const authenticator = await virtualAuthenticator(context, page);
        const mediations = await recordMediations(page);
        // The password alone: the console says what the role needs; /admin refuses, saying to add a passkey.
        await signIn(page, t.url, `/console?lang=${lang}`, admin);
        expect(await page.locator('main .notice').innerText()).to.include(
          lang === 'ko' ? '패스키가 있어야 권한을 씁니다' : 'only with a passkey',
        );
        const refused = await page.goto(`${t.url}/admin?lang=${lang}`);
        expect(refused?.status()).to.equal(403);
        expect(await page.locator('[role=alert]').innerText()).to.equal(
          lang === 'ko'
            ? '관리자 콘솔을 열려면 패스키로 로그인해야 합니다. 내 계정에서 패스키를 추가한 뒤 그 패스키로 다시 로그인하세요.'
            : 'The admin console needs a sign-in with a passkey. Add one in My account, then sign in again with it.',
        );
        await look(page, 'admin-needed', lang);
        await addPasskey(page, lang, 'YubiKey', PASSWORD);

        // The sign-in without it is asked again: the passkey alone (from the email field) opens /admin.
        mediations.length = 0;
        await page.goto(`${t.url}/admin?lang=${lang}`);
        await page.waitForURL((url) => url.pathname === '/admin');
        expect(await mediationsAsked(mediations)).to.deep.equal(['conditional']);
        expect(await page.locator('h1').innerText()).to.include(lang === 'ko' ? '관리' : 'Admin');
        await signOut(page);

        // After the password, its passkey is the second step (a page of its own), and then /admin opens.
        await authenticator.presence(false);
        await page.goto(`${t.url}/admin?lang=${lang}`);
        await page.fill('#f-email', admin.email);
        await page.fill('#f-password', PASSWORD);
        await page.click('button.primary');
        await page.waitForSelector('h1:has-text("' + (lang === 'ko' ? '패스키로 확인' : 'Confirm with a passkey') + '")');
        expect(await page.locator('#f-passkey').isVisible()).to.equal(true);
        await look(page, 'second-step', lang);
        await authenticator.presence(true);
        mediations.length = 0;
        await Promise.all([page.waitForURL((url) => url.pathname === '/admin'), page.click('#f-passkey')]);
        expect(await mediationsAsked(mediations)).to.deep.equal(['optional']);

        // Staff see a person's passkeys and remove them.
        await t.db.models.passkeys.create({
          _id: `person-${lang}`,
          accountId: person.id,
          name: lang === 'ko' ? '잃어버린 휴대폰' : 'Lost phone',
          publicKey: 'AA',
          counter: 0,
          transports: ['internal', 'hybrid'],
          userHandle: 'handle',
          multiDevice: true,
          backedUp: true,
          createdAt: new Date(),
        });
        await page.goto(`${t.url}/admin/accounts/${person.id}?lang=${lang}`);
        expect(await page.locator('#account-passkeys ~ .table th[scope=row]').innerText()).to.equal(
          lang === 'ko' ? '잃어버린 휴대폰' : 'Lost phone',
        );
        await look(page, 'admin-account', lang);
        await Promise.all([
          page.waitForURL((url) => url.pathname === `/admin/accounts/${person.id}`),
          page.click(`form[action="/admin/accounts/${person.id}/passkeys/remove"] button`),
        ]);
        expect(await page.locator('.flash.ok').innerText()).to.equal(
          lang === 'ko' ? `${person.email}의 패스키 1개를 삭제했습니다.` : `Removed 1 passkey of ${person.email}.`,
        );
      } finally {
        await context.close();
      }
    });

    it(`${lang}: ADMIN_MFA=passkey: staff with only a TOTP app do not open /admin; a passkey added with the app's code does`, async () => {
      const admin = await account(`totp-admin-${lang}@gsm.hs.kr`, 'ADMIN');
      const keys = await loadOAuthKeys(t.config, t.db);
      const { secret } = await new MfaService(t.db, keys.cookieKeys, now).enrol(admin.id, admin.email, { active: true });
      const code = () => {
        offsetMs += 30_000;
        return generate({ secret, epoch: Math.floor(now().getTime() / 1000) });
      };
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: lang === 'ko' ? 'ko-KR' : 'en-US' });
      const page = await context.newPage();
      try {
        const authenticator = await virtualAuthenticator(context, page);
        await page.goto(`${t.url}/admin?lang=${lang}`);
        await page.fill('#f-email', admin.email);
        await page.fill('#f-password', PASSWORD);
        await page.click('button.primary');
        await page.waitForSelector('#f-code');
        // No passkey yet: the code form alone.
        expect(await page.locator('#f-passkey').count()).to.equal(0);
        await page.fill('#f-code', await code());
        const [refused] = await Promise.all([
          page.waitForResponse((res) => new URL(res.url()).pathname === '/admin'),
          page.click('button.primary'),
        ]);
        expect(refused.status()).to.equal(403);
        expect(await page.locator('h1').innerText()).to.equal(lang === 'ko' ? '패스키가 필요합니다' : 'A passkey is required');

        // A passkey added with a code of the app (a current factor) in place of the password.
        await page.goto(`${t.url}/console/account/passkeys/new?lang=${lang}`);
        expect(await page.locator('label[for="f-current"]').innerText()).to.equal(
          lang === 'ko' ? '현재 비밀번호 또는 인증 앱의 6자리 코드' : 'Current password, or the 6-digit code of your authenticator app',
        );
        await addPasskey(page, lang, 'Laptop', await code());
        await signOut(page);

        // After the password: the app's code, or the passkey; the passkey opens /admin.
        await authenticator.presence(false);
        await page.goto(`${t.url}/admin?lang=${lang}`);
        await page.fill('#f-email', admin.email);
        await page.fill('#f-password', PASSWORD);
        await page.click('button.primary');
        await page.waitForSelector('#f-code');
        expect(await page.locator('#f-passkey').isVisible()).to.equal(true);
        await look(page, 'totp-or-passkey', lang);
        await authenticator.presence(true);
        await Promise.all([page.waitForURL((url) => url.pathname === '/admin'), page.click('#f-passkey')]);
        expect(await page.locator('h1').innerText()).to.include(lang === 'ko' ? '관리' : 'Admin');
      } finally {
        await context.close();
      }
    });
  }
});
