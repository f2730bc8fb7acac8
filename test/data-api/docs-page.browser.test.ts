import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ENDPOINTS } from '../../src/rest/endpoints.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { VIEWPORTS, launchChromium, screenshot, wcagViolations } from '../helpers/browser.js';

/**
 * The API reference page (GET /docs) in headless Chromium, at phone and desktop widths: Swagger
 * UI, served from our own origin (swagger-ui-dist out of node_modules), renders every operation
 * of the endpoint table from /v1/openapi.json under a Content-Security-Policy that allows no
 * inline code; nothing is fetched from anywhere else. Like every page of ours
 * (test/pages/every-page.browser.test.ts), it meets WCAG 2.2 AA as axe-core checks it, in each state a
 * reader brings it to (src/http/docs.ts says what it takes).
 */
describe('data API: the reference page (/docs) in a browser', function () {
  this.timeout(60000);
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    t = await buildTestApp('docs_browser');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  /** Opens /docs and records console errors and every request that left our origin. */
  async function openDocs(viewport: { width: number; height: number }) {
    const context = await browser.newContext({ viewport, locale: 'ko-KR' });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol !== 'data:' && url.origin !== t.url) elsewhere.push(request.url());
    });
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 20000 });
    return { page, context, consoleErrors, elsewhere };
  }

  async function operationPaths(page: Page): Promise<string[]> {
    return page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.getAttribute('data-path') ?? n.textContent ?? ''));
  }

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`renders every operation at ${name} width (${viewport.width} px), Korean first, no CSP or other errors, nothing from elsewhere`, async () => {
      const { page, context, consoleErrors, elsewhere } = await openDocs(viewport);
      try {
        expect(await page.getAttribute('html', 'lang')).to.equal('ko');
        expect(await page.title()).to.equal('데이터 API 문서 · Data API reference');
        expect(await page.textContent('h1')).to.match(/^데이터 API 문서/);
        expect(await page.getAttribute('.intro p a', 'href')).to.equal('/v1/openapi.json');
        // The way to the front door and the consoles.
        expect(await page.locator('.intro nav a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).to.deep.equal([
          '/',
          '/console',
          '/admin',
        ]);
        const paths = await operationPaths(page);
        expect([...paths].sort()).to.deep.equal([...ENDPOINTS.map((e) => e.path), '/v1/health', '/v1/status'].sort());
        // The document's title and version, as Swagger UI shows them.
        expect(await page.textContent('.info .title')).to.include('Campus Data Service');
        // Usable on a phone: the page does not scroll sideways.
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, 'horizontal overflow in px').to.be.at.most(0);
        expect(consoleErrors, 'console errors (CSP violations included)').to.deep.equal([]);
        expect(elsewhere, 'requests to other origins').to.deep.equal([]);
        await screenshot(page, `docs-${name}`);
      } finally {
        await context.close();
      }
    });
  }

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`meets WCAG 2.2 AA (axe-core) at ${name} width: as loaded, an operation opened, tried and answered, the Authorize dialog`, async () => {
      const { page, context, consoleErrors } = await openDocs(viewport);
      try {
        expect(await wcagViolations(page), 'as loaded').to.deep.equal([]);
        await screenshot(page, `docs-axe-${name}`);
        // An operation's path is no link inside its button; deep linking still names it in the address.
        expect(await page.locator('.opblock-summary-control a[href]').count(), 'links inside the buttons').to.equal(0);
        await page.click('.opblock-summary-path[data-path="/v1/students"]');
        await page.waitForSelector('.parameters-container tr[data-param-name="sortBy"]');
        expect(new URL(page.url()).hash).to.equal('#/students/getStudents');
        await page.click('button.try-out__btn');
        await page.click('button.execute');
        await page.waitForSelector('.live-responses-table tr.response .response-col_status');
        // Without a key: the 401 envelope, shown with its headers.
        expect((await page.textContent('.live-responses-table tr.response .response-col_status'))?.trim()).to.equal('401');
        expect(await page.getAttribute('tr[data-param-name="sortBy"] select', 'aria-label')).to.equal('sortBy');
        expect(await wcagViolations(page), 'an operation tried').to.deep.equal([]);
        await screenshot(page, `docs-axe-tried-${name}`);

        await page.click('.auth-wrapper button.authorize');
        await page.waitForSelector('.modal-ux input');
        expect(await wcagViolations(page), 'the Authorize dialog').to.deep.equal([]);
        await page.fill('.modal-ux input', '00000000-0000-4000-8000-000000000000');
        await page.click('.modal-ux .auth-btn-wrapper button.authorize');
        await page.waitForSelector('.modal-ux .auth-btn-wrapper button:has-text("Logout")');
        expect(await wcagViolations(page), 'the Authorize dialog, authorized').to.deep.equal([]);
        await screenshot(page, `docs-axe-authorized-${name}`);
        // The browser reports the request tried without a key, and nothing else.
        expect(consoleErrors).to.deep.equal(['Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
      } finally {
        await context.close();
      }
    });
  }

  it('an address naming an operation opens it (deep linking, without links in the operation buttons)', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    try {
      await page.goto(`${t.url}/docs#/clubs/getClubs`);
      await page.waitForSelector('#operations-clubs-getClubs .parameters-container');
      expect(await page.getAttribute('#operations-clubs-getClubs .opblock-summary-control', 'aria-expanded')).to.equal('true');
      expect(await page.getAttribute('#operations-students-getStudents .opblock-summary-control', 'aria-expanded')).to.equal('false');
    } finally {
      await context.close();
    }
  });

  it('opens an operation: its parameters (with enum values) and responses come from the document', async () => {
    const { page, context, consoleErrors } = await openDocs(VIEWPORTS.desktop);
    try {
      await page.click('.opblock-summary-path[data-path="/v1/students"]');
      await page.waitForSelector('.parameters-container tr[data-param-name="sortBy"]');
      const parameterNames = await page.$$eval('tr[data-param-name]', (rows) => rows.map((r) => r.getAttribute('data-param-name')));
      expect(parameterNames).to.include.members(['studentId', 'grade', 'sex', 'includeGraduates', 'size', 'sortBy', 'sortDirection']);
      expect(await page.textContent('tr[data-param-name="sortBy"]')).to.include('DORMITORY_ROOM');
      const statuses = await page.$$eval('.responses-table tr.response', (rows) => rows.map((r) => r.getAttribute('data-code')));
      expect(statuses).to.include.members(['200', '304', '400', '401', '403', '405', '429', '500', '503']);
      await screenshot(page, 'docs-desktop-students');
      expect(consoleErrors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('serves its assets from our origin with their content types, gzipped when asked, revalidated by ETag', async () => {
    const files = {
      '/docs/assets/swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
      '/docs/assets/swagger-ui.css': 'text/css; charset=utf-8',
      '/docs/assets/favicon-32x32.png': 'image/png',
      '/docs/assets/docs.js': 'text/javascript; charset=utf-8',
      '/docs/assets/docs.css': 'text/css; charset=utf-8',
    };
    for (const [path, type] of Object.entries(files)) {
      const res = await t.request(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type'), path).to.equal(type);
      expect(res.headers.get('content-encoding'), path).to.equal('gzip');
      expect(res.headers.get('cache-control'), path).to.equal('public, max-age=3600');
      expect((await res.arrayBuffer()).byteLength, path).to.be.greaterThan(0);
      const again = await t.request(path, { headers: { 'If-None-Match': res.headers.get('etag') ?? '', 'Cache-Control': 'max-age=0' } });
      expect(again.status, path).to.equal(304);
    }
    const page = await t.request('/docs');
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).to.equal(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(await page.text()).to.not.match(/<script>|<style>| style=/);
    expect((await t.request('/docs/assets/index.html')).status, 'only the files the page needs').to.equal(404);
    expect((await t.request('/docs', { method: 'POST' })).status).to.equal(405);
  });

  it('shows the developer kit: the login button in Korean and English, light and dark, from /docs/kit, with its snippet and stylesheet', async () => {
    for (const variant of ['ko-light', 'ko-dark', 'en-light', 'en-dark']) {
      const res = await t.request(`/docs/kit/login-button-${variant}.svg`);
      expect(res.status, variant).to.equal(200);
      expect(res.headers.get('content-type'), variant).to.equal('image/svg+xml');
      expect(await res.text(), variant).to.include(variant.startsWith('ko') ? '학교 계정으로 로그인' : 'Sign in with school account');
    }
    const snippet = await t.request('/docs/kit/login-button.html');
    expect(snippet.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(await snippet.text()).to.include('<a class="campus-login campus-login--dark" href="/login">');
    expect((await t.request('/docs/kit/login-button.css')).headers.get('content-type')).to.equal('text/css; charset=utf-8');

    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { page, context, consoleErrors } = await openDocs(viewport);
      try {
        const images = page.locator('.kit img');
        expect(await images.evaluateAll((nodes) => nodes.map((n) => n.getAttribute('alt')))).to.deep.equal([
          '학교 계정으로 로그인',
          'Sign in with school account',
          '학교 계정으로 로그인',
          'Sign in with school account',
        ]);
        // Every image loaded (a broken one has no natural width).
        expect(
          await images.evaluateAll((nodes) => nodes.every((n) => (n as unknown as { naturalWidth: number }).naturalWidth > 0)),
        ).to.equal(true);
        expect(await page.textContent('.kit')).to.include('examples/login-with-school');
        expect(consoleErrors).to.deep.equal([]);
        await screenshot(page, `docs-kit-${name}`);
        // The kit on its own, to look at the buttons closely.
        await screenshot(page, `docs-kit-only-${name}`, page.locator('.kit'));
      } finally {
        await context.close();
      }
    }
  });
});
