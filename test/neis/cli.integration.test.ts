import { expect } from 'chai';
import { academicYearWindow, todayIn } from '../../src/calendar.js';
import { DEMO_API_KEY } from '../../src/cli/commands/seed.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { startFakeNeis, type FakeNeis } from '../../src/neis/fake-server.js';
import { buildTestApp } from '../helpers/app.js';
import { testDatabaseUri } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { runCampus } from '../helpers/cli.js';

/** Runs the real `campus` command with the given environment. */
const campus = (env: Record<string, string>, ...args: string[]) => runCampus(env, args);

describe('NEIS: campus neis sync and campus seed --demo', function () {
  this.timeout(60000);
  let fake: FakeNeis;
  let uri: string;
  let db: Database;
  let env: Record<string, string>;

  before(async () => {
    // A short span keeps the default (academic-year) window small: NEIS has rows only near today.
    fake = await startFakeNeis({ apiKey: 'cli-key', spanDays: 3 });
    uri = testDatabaseUri('neis_cli');
    db = await openDatabase(uri);
    await db.ensureIndexes();
    env = { MONGODB_URI: uri, NEIS_BASE_URL: fake.url, NEIS_API_KEY: 'cli-key' };
  });
  after(async () => {
    await fake.close();
    await db.connection.dropDatabase();
    await db.close();
  });
  afterEach(() => fake.reset());

  it('--help describes the command, its options and the default window', async () => {
    const help = await campus({}, 'neis', 'sync', '--help');
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('Usage: campus neis sync [options]');
    expect(help.stdout).to.include('--from <date>');
    expect(help.stdout).to.include('--to <date>');
    expect(help.stdout).to.include('--json');
    // Commander wraps long descriptions; compare the words.
    expect(help.stdout.replace(/\s+/g, ' ')).to.include('default window: the current academic year, 1 March to the end of February');
  });

  it('--from/--to syncs that window, with progress on stderr and the outcome on stdout', async () => {
    const anchor = fake.anchor;
    const result = await campus(env, 'neis', 'sync', '--from', anchor, '--to', anchor, '--json');
    expect(result.code, result.stderr).to.equal(0);
    const report = JSON.parse(result.stdout) as {
      outcome: string;
      trigger: string;
      from: string;
      datasets: Record<string, { rows: number }>;
    };
    expect(report).to.deep.include({ outcome: 'ok', trigger: 'cli', from: anchor });
    expect(report.datasets['meals']?.rows).to.equal(3);
    expect(result.stderr).to.include(`syncing F10/7380292 for ${anchor}..${anchor}`);
    expect(result.stderr).to.include('meals: page 1/1 (3/3 rows)');
    expect(result.stderr).to.include(`meals: 3 records now served for ${anchor}..${anchor}`);
    expect(fake.requests.find((r) => r.service === 'mealServiceDietInfo')?.params['KEY']).to.equal('cli-key');
  });

  it('without --from/--to syncs the current academic year', async () => {
    const result = await campus(env, 'neis', 'sync');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/^NEIS sync ok for \d{4}-03-01\.\.\d{4}-02-(28|29)\.\n {2}meals: \d+ records\n/);
    const window = academicYearWindow(todayIn('Asia/Seoul', new Date()));
    expect(fake.requests.find((r) => r.service === 'SchoolSchedule')?.params).to.include({
      AA_FROM_YMD: window.from.replaceAll('-', ''),
      AA_TO_YMD: window.to.replaceAll('-', ''),
    });
  });

  it('exits 1 when NEIS refuses, saying the previous data stays', async () => {
    for (const service of ['mealServiceDietInfo', 'SchoolSchedule', 'hisTimetable'] as const)
      fake.setDefault(service, { kind: 'result', code: 'ERROR-290' });
    const result = await campus({ ...env, NEIS_API_KEY: 'wrong' }, 'neis', 'sync', '--from', fake.anchor, '--to', fake.anchor);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.include(`NEIS sync failed for ${fake.anchor}..${fake.anchor}.`);
    expect(result.stdout).to.include('meals: failed, previous data kept (NEIS mealServiceDietInfo answered ERROR-290');
    expect(result.stderr).to.include('the previous data stays');
  });

  it('refuses one end of a window before touching anything (the other refusals: test/neis/dates.unit.test.ts)', async () => {
    const oneEnd = await campus(env, 'neis', 'sync', '--from', '2026-03-01');
    expect(oneEnd.code).to.equal(1);
    expect(oneEnd.stderr).to.equal(
      'campus: --from and --to go together: give both (YYYY-MM-DD), or neither for the current academic year.\n',
    );
    expect(fake.requests).to.deep.equal([]);
  });

  it("seed --demo loads today's demo meals and schedules: the README's curl examples answer them", async () => {
    const seeded = await campus({ MONGODB_URI: uri }, 'seed', '--demo');
    expect(seeded.code, seeded.stderr).to.equal(0);
    expect(seeded.stdout).to.match(
      /NEIS demo data \(from the built-in fake NEIS server, no NEIS key needed\) for .*: \d+ meals, \d+ calendar events, \d+ timetable periods; today is \d{4}-\d{2}-\d{2} \(Asia\/Seoul\)\./,
    );
    const today = todayIn('Asia/Seoul', new Date());
    const t = await buildTestApp('neis_cli_readme', { db });
    try {
      const headers = { 'X-API-KEY': DEMO_API_KEY };
      // curl -H "X-API-KEY: de70c0de-…" http://127.0.0.1:8080/v1/neis/meals
      const meals = await expectOk<{ mealDate: string; mealType: string; mealMenu: string[] }[]>(
        await t.request('/v1/neis/meals', { headers }),
      );
      expect(meals.map((m) => [m.mealDate, m.mealType])).to.deep.equal([
        [today, 'BREAKFAST'],
        [today, 'LUNCH'],
        [today, 'DINNER'],
      ]);
      expect(meals[1]?.mealMenu.length).to.be.greaterThan(3);
      // curl -H "X-API-KEY: de70c0de-…" http://127.0.0.1:8080/v1/neis/schedules
      const schedules = await expectOk<{ scheduleDate: string }[]>(await t.request('/v1/neis/schedules', { headers }));
      expect(schedules.length).to.be.greaterThan(0);
      expect(schedules.every((s) => s.scheduleDate === today)).to.equal(true);
      const health = await expectOk<{ neis: { lastSync: { trigger: string; outcome: string } } }>(await t.request('/v1/health'));
      expect(health.neis.lastSync).to.deep.include({ trigger: 'seed', outcome: 'ok' });

      // Seeding again leaves the same data.
      expect((await campus({ MONGODB_URI: uri }, 'seed', '--demo')).code).to.equal(0);
      expect(await expectOk(await t.request('/v1/neis/meals', { headers }))).to.deep.equal(meals);
    } finally {
      await t.close();
    }
  });
});
