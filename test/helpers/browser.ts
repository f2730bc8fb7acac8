import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

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
 * Saves a full-page screenshot under .data/screenshots/ (git-ignored), or SCREENSHOTS_DIR when set
 * (e.g. a directory to look at them from), and returns its path.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env['SCREENSHOTS_DIR'] ?? join('.data', 'screenshots');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
