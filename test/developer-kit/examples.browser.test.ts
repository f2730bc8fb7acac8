import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { DEMO_API_KEY, demoAccountEmail } from '../../src/data/school/demo.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';
import { VIEWPORTS, launchChromium, screenshot } from '../helpers/browser.js';
import { eventually } from '../helpers/receiver.js';
import { registerMachineApp, serveDemo, type ServedDemo } from '../helpers/serve.js';

const run = promisify(execFile);

/** An example started as its README says (`npm start` in its directory), and how to stop it. */
interface RunningExample {
  readonly output: string[];
  stop(): Promise<void>;
}

/**
 * Starts `npm start` in examples/<name> in a process group of its own (npm, its shell and node),
 * and waits (bounded) for a line matching `ready`.
 */
async function startExample(name: string, env: Record<string, string>, ready: RegExp): Promise<RunningExample> {
  const child: ChildProcess = spawn('npm', ['start', '--silent'], {
    cwd: join('examples', name),
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stdout = child.stdout;
  if (!stdout) throw new Error('no stdout');
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start in 60 s: ${stderr}`)), 60000);
    createInterface({ input: stdout }).on('line', (line) => {
      output.push(line);
      if (ready.test(line)) {
        clearTimeout(timer);
        done();
      }
    });
    void exited.then(() => fail(new Error(`${name} exited: ${stderr}`)));
  });
  return {
    output,
    async stop() {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}

/** Runs `npm start` in examples/<name> to its end; its stdout. */
async function runExample(name: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run('npm', ['start', '--silent'], { cwd: join('examples', name), env: { ...process.env, ...env } });
  return stdout;
}

/**
 * The examples of examples/, each started with `npm start` against a real `campus serve` on the
 * demo school: the login example through a real sign-in in headless Chromium, the meals script
 * twice (a fresh answer, then a 304 from its ETag cache).
 */
describe('developer kit: examples/ against campus serve', function () {
  this.timeout(240000);
  let served: ServedDemo;
  let browser: Browser;

  before(async () => {
    // The examples load the client from its build (clients/typescript/dist), as an installed app would.
    await Promise.all([
      run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'clients/typescript/tsconfig.json']),
      serveDemo('examples').then((s) => (served = s)),
      launchChromium().then((b) => (browser = b)),
    ]);
  });
  after(async () => {
    await browser?.close();
    await served?.stop();
  });

  it('login-with-school: the button, a real sign-in showing the name and email, refresh, and sign-out back to the app', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const registered = JSON.parse(
      await served.campus([
        'clients',
        'create',
        '--name',
        'Login example',
        '--redirect-uri',
        `${origin}/callback`,
        '--post-logout-redirect-uri',
        `${origin}/`,
        '--json',
      ]),
    ) as { id: string; clientSecret: string };
    const example = await startExample(
      'login-with-school',
      {
        CAMPUS_ISSUER: served.url,
        CLIENT_ID: registered.id,
        CLIENT_SECRET: registered.clientSecret,
        REDIRECT_URI: `${origin}/callback`,
        POST_LOGOUT_REDIRECT_URI: `${origin}/`,
        PORT: String(port),
      },
      /listening on/,
    );
    const context = await browser.newContext({ locale: 'ko-KR', viewport: VIEWPORTS.desktop });
    try {
      expect(example.output[0]).to.equal(`login-with-school: listening on ${origin} (issuer ${served.url}, client ${registered.id})`);
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      const button = page.getByRole('link', { name: '학교 계정으로 로그인' });
      expect(await button.count()).to.equal(1);
      await screenshot(page, 'example-login-before-desktop');
      await page.setViewportSize(VIEWPORTS.phone);
      await screenshot(page, 'example-login-before-phone');
      await page.setViewportSize(VIEWPORTS.desktop);

      await button.click();
      await page.waitForURL((url) => url.pathname.startsWith('/v1/oauth/interaction/'));
      await page.getByLabel('이메일').fill(demoAccountEmail());
      await page.getByLabel('비밀번호').fill(DEMO_OAUTH.password);
      await page.getByRole('button', { name: '로그인', exact: true }).click();
      await page.getByRole('button', { name: '허용' }).click();
      await page.waitForURL(`${origin}/`);
      expect(await page.textContent('dd.name')).to.equal('홍건우');
      expect(await page.textContent('dd.email')).to.equal(demoAccountEmail());
      expect(await page.textContent('h2')).to.include('홍건우');
      await screenshot(page, 'example-login-after-desktop');
      await page.setViewportSize(VIEWPORTS.phone);
      await screenshot(page, 'example-login-after-phone');

      await page.getByRole('button', { name: /토큰 새로 고침/ }).click();
      await page.waitForSelector('p.refreshed');
      expect(await page.textContent('dd.name')).to.equal('홍건우');

      // Sign out: the app revokes its grant, then our logout page asks, then the browser comes back.
      await page.getByRole('button', { name: /로그아웃/ }).click();
      await page.waitForURL((url) => url.pathname === '/v1/oauth/logout');
      await page.getByRole('button', { name: '로그아웃' }).click();
      await page.waitForURL(`${origin}/`);
      expect(await page.getByRole('link', { name: '학교 계정으로 로그인' }).count()).to.equal(1);
      // Signed out at the school too: the next login asks for the password again.
      await page.getByRole('link', { name: '학교 계정으로 로그인' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/v1/oauth/interaction/'));
      expect(await page.getByLabel('비밀번호').count()).to.equal(1);
    } finally {
      await context.close();
      await example.stop();
    }
  });

  it('webhook-receiver: verifies the signature of a delivery made by campus webhooks test, and refuses a forged one', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const created = JSON.parse(await served.campus(['webhooks', 'create', '--url', url, '--events', 'student.*,club.*', '--json'])) as {
      id: string;
      secret: string;
    };
    const example = await startExample('webhook-receiver', { WEBHOOK_SECRET: created.secret, PORT: String(port) }, /listening on/);
    try {
      expect(example.output[0]).to.equal(`webhook-receiver: listening on ${url}`);
      expect(await served.campus(['webhooks', 'test', created.id])).to.match(/^Delivered: /);
      // The receiver prints before it answers; its line may reach this process a moment after the answer.
      await eventually(() => example.output.length >= 2, 5000, "the receiver's line");
      expect(example.output[1]).to.match(/^test_[0-9a-f]{12} webhook\.test$/);
      const forged = await fetch(url, {
        method: 'POST',
        headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{"id":"1","type":"student.deleted"}',
      });
      expect([forged.status, await forged.text()]).to.deep.equal([400, 'bad signature']);
      expect(example.output).to.have.length(2);
    } finally {
      await example.stop();
      await served.campus(['webhooks', 'delete', created.id]);
    }
  });

  it('nightly-sync: an app server copies the clubs with a machine token, then revalidates its copy with the ETag (304)', async () => {
    const registered = await registerMachineApp(served, 'Nightly sync', 'CLUB_READ');
    const dir = mkdtempSync(join(tmpdir(), 'nightly-sync-'));
    try {
      const out = join(dir, 'clubs.json');
      const env = { CAMPUS_ISSUER: served.url, CLIENT_ID: registered.id, CLIENT_SECRET: registered.clientSecret, OUT: out };
      const expected = (await (
        await fetch(`${served.url}/v1/clubs?size=1000&includeLeaderInParticipants=true`, { headers: { 'X-API-KEY': DEMO_API_KEY } })
      ).json()) as { data: { clubs: { participants: unknown[] }[] } };
      const members = expected.data.clubs.reduce((sum, club) => sum + club.participants.length, 0);
      expect(expected.data.clubs.length).to.be.greaterThan(0);
      const first = await runExample('nightly-sync', env);
      expect(first).to.equal(`nightly-sync: ${expected.data.clubs.length} clubs, ${members} members written to ${out}\n`);
      // The copy is what a key with the same scope reads.
      expect((JSON.parse(readFileSync(out, 'utf8')) as { answer: unknown }).answer).to.deep.equal(expected);
      const second = await runExample('nightly-sync', env);
      expect(second).to.match(/^nightly-sync: clubs unchanged since \d{4}-\d\d-\d\dT[\d:.]+Z \(304 Not Modified\)\n$/);
      // Without its secret it says what to set, and exits 2.
      const missing = await run('npm', ['start', '--silent'], {
        cwd: join('examples', 'nightly-sync'),
        env: { ...process.env, CLIENT_ID: '' },
      }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(missing?.code).to.equal(2);
      expect(missing?.stderr).to.include('nightly-sync: set CLIENT_ID and CLIENT_SECRET');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('meals-today: prints the day’s meals with the typed client, then revalidates its cache with the ETag (304)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meals-today-'));
    try {
      const env = { CAMPUS_URL: served.url, CAMPUS_API_KEY: DEMO_API_KEY, MEALS_CACHE: join(dir, 'meals.json') };
      const expected = (await (await fetch(`${served.url}/v1/neis/meals`, { headers: { 'X-API-KEY': DEMO_API_KEY } })).json()) as {
        data: { mealMenu: string[] }[];
      };
      const first = await runExample('meals-today', env);
      expect(first).to.match(/^\(200 OK: 새로 받았습니다 \/ fresh, ETag "[^"]+"\)\n/);
      for (const dish of expected.data.flatMap((m) => m.mealMenu)) expect(first).to.include(`  - ${dish}\n`);
      if (expected.data.length === 0) expect(first).to.include('오늘은 급식이 없습니다.');
      const second = await runExample('meals-today', env);
      expect(second.split('\n')[0]).to.equal('(304 Not Modified: 저장해 둔 답을 씁니다 / using the cached answer)');
      expect(second.split('\n').slice(1)).to.deep.equal(first.split('\n').slice(1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
