import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from './app.js';
import { createAccount } from './oauth.js';

/** Debian's Chromium, headless, without the background traffic this machine's network refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a console's browser test runs against: the test app, with one person's account, and Chromium. */
export interface BrowserWorld {
  readonly t: TestApp;
  readonly browser: Browser;
}

/** Builds a browser test's world (in its `before`): the test app `name`, `person`'s account in it, and Chromium. */
export async function openBrowserWorld(name: string, person: { email: string; password: string }): Promise<BrowserWorld> {
  const t = await buildTestApp(name);
  await createAccount(t.db, person.email, person.password);
  return { t, browser: await launchChromium() };
}

/** Closes what openBrowserWorld opened (in the test's `after`), also when its `before` stopped half-way. */
export async function closeBrowserWorld(world: Partial<BrowserWorld>): Promise<void> {
  await world.browser?.close();
  await world.t?.close();
}

/**
 * A client application's callback on 127.0.0.1 that only answers (a test reads the address the
 * browser lands on); its redirect URI ends in `path`.
 */
export async function startCallback(path = '/callback'): Promise<{ server: Server; redirectUri: string }> {
  const server = createServer((_req, res) => res.end('callback reached'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  return { server, redirectUri: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${path}` };
}

/** Phone and desktop viewports for screenshots. */
export const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } } as const;

/**
 * Opens `path` of our pages, signs in on our login page when sent there, and waits to be back.
 * `keepSignedIn` ticks "keep me signed in".
 */
export async function signIn(page: Page, baseUrl: string, path: string, account: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}${path}`);
  if (page.url().includes('/v1/oauth/interaction/')) {
    await page.fill('#f-email', account.email);
    await page.fill('#f-password', account.password);
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/v1/oauth/')), page.click('button.primary')]);
  }
}

/**
 * Saves a full-page screenshot of `page` (or of one part of it, `locator`) as `<name>.png` in
 * SCREENSHOTS_DIR, to be looked at (`npm run screenshots` fills .data/screenshots/, git-ignored).
 * Without SCREENSHOTS_DIR it saves nothing: what the tests check they read from the page, and
 * encoding some hundred full-page images took a third of the browser tests' time in every run.
 */
export async function screenshot(page: Page, name: string, locator?: Locator): Promise<void> {
  const dir = process.env['SCREENSHOTS_DIR'];
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await (locator ? locator.screenshot({ path }) : page.screenshot({ path, fullPage: true }));
}

/**
 * axe-core's rules for WCAG 2.2 level AA: every level A and AA success criterion of WCAG 2.0, 2.1
 * and 2.2 (2.1's level A holds 2.5.3 Label in Name: a control's name contains its visible label).
 */
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/**
 * What axe-core finds against WCAG 2.2 AA on the page as it is shown now: one line per rule
 * broken, with the elements breaking it (axe's selectors), e.g. `color-contrast (Elements must
 * meet minimum color contrast ratio thresholds): .opblock-summary-method`. Empty when it passes.
 */
export async function wcagViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's Content-Security-Policy does not govern
  // (the pages allow no inline script, so a <script> holding axe would be refused).
  await page.evaluate(axe.source);
  return page.evaluate(async (tags) => {
    const { axe: inPage } = globalThis as unknown as { axe: typeof axe };
    const results = await inPage.run({ runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return results.violations.map((rule) => `${rule.id} (${rule.help}): ${rule.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  }, WCAG_22_AA);
}
