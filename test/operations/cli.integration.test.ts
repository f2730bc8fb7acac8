import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { openDatabase, type Database } from '../../src/data/database.js';

/** Runs the real `campus` command against the given database. */
const campus = (uri: string, ...args: string[]) => runCampus({ MONGODB_URI: uri }, args);

describe('operations: the campus command', function () {
  this.timeout(60000);
  let uri: string;
  let db: Database;
  let t: TestApp;

  before(async () => {
    uri = testDatabaseUri('cli');
    db = await openDatabase(uri);
    t = await buildTestApp('cli', { db });
  });
  after(async () => {
    await t.close();
    await db.connection.dropDatabase();
    await db.close();
  });

  it('seed --demo loads the demo school, and running it twice leaves the same data', async () => {
    const first = await campus(uri, 'seed', '--demo', '--json');
    expect(first.code, first.stderr).to.equal(0);
    const summary = JSON.parse(first.stdout) as { students: number; clubs: number; projects: number; apiKey: string };
    expect(summary.students).to.be.within(3 * 4 * 16, 3 * 4 * 18 + 40);
    expect(summary.clubs).to.be.at.least(15);
    expect(summary.projects).to.be.at.least(20);
    const snapshot = async () => ({
      students: await db.models.students.find().sort({ _id: 1 }).lean(),
      clubs: await db.models.clubs.find().sort({ _id: 1 }).lean(),
      projects: await db.models.projects.find().sort({ _id: 1 }).lean(),
      keys: await db.models.apiKeys.countDocuments(),
    });
    const before = await snapshot();
    expect((await campus(uri, 'seed', '--demo')).code).to.equal(0);
    expect(await snapshot()).to.deep.equal(before);

    const grades = new Set(before.students.map((s) => s.grade));
    expect([...grades].sort()).to.deep.equal([1, 2, 3, null]);
    expect(before.students.some((s) => s.role === 'GRADUATE')).to.equal(true);
    expect(before.students.some((s) => s.role === 'WITHDRAWN')).to.equal(true);
    expect(before.students.some((s) => s.dormitoryRoom !== null)).to.equal(true);
    expect(new Set(before.clubs.map((c) => c.type))).to.deep.equal(new Set(['MAJOR_CLUB', 'AUTONOMOUS_CLUB']));
    for (const s of before.students.filter((s) => s.role === 'GRADUATE' || s.role === 'WITHDRAWN')) {
      expect([s.grade, s.classNum, s.number, s.studentNumber, s.major]).to.deep.equal([null, null, null, null, null]);
    }
    const res = await t.request('/v1/students?size=1', { headers: { 'X-API-KEY': summary.apiKey } });
    expect(res.status).to.equal(200);
  });

  it('seed --demo --students N loads a school of N students with progress on stderr; N out of 100-20000 is refused', async () => {
    // The database holds the demo school already: --reset replaces it (seed --demo alone keeps it).
    const big = await campus(uri, 'seed', '--demo', '--students', '1500', '--reset', '--json');
    expect(big.code, big.stderr).to.equal(0);
    expect(JSON.parse(big.stdout)).to.include({
      students: 1500,
      clubs: 16 + Math.round((1272 * 16) / 228),
      projects: 24 + Math.round((1272 * 24) / 228),
    });
    expect(big.stderr).to.include('students written: 1500 of 1500');
    expect(await db.models.students.countDocuments()).to.equal(1500);
    const res = await t.request('/v1/students?includeGraduates=true&includeWithdrawn=true&size=1', {
      headers: { 'X-API-KEY': (JSON.parse(big.stdout) as { apiKey: string }).apiKey },
    });
    expect(((await res.json()) as { data: { totalElements: number } }).data.totalElements).to.equal(1500);
    for (const [args, message] of [
      [['--demo', '--students', '99'], 'campus: --students must be a whole number from 100 to 20000 (got "99").'],
      [['--demo', '--students', '1e3'], 'campus: --students must be a whole number from 100 to 20000 (got "1e3").'],
      [['--students', '500'], 'campus: --students goes with --demo.'],
      [['--reset'], 'campus: --reset goes with --demo.'],
    ] as const) {
      const refused = await campus(uri, 'seed', ...args);
      expect([refused.code, refused.stderr.trim()]).to.deep.equal([1, message]);
    }
    expect((await campus(uri, 'seed', '--demo', '--reset')).code).to.equal(0);
  });

  it('keys issue | list | renew | rotate | revoke, each taking effect at the API', async () => {
    const issued = await campus(
      uri,
      'keys',
      'issue',
      '--scopes',
      'STUDENT_READ,CLUB_READ',
      '--days',
      '10',
      '--label',
      'cli test',
      '--rate-limit',
      '50/60',
      '--json',
    );
    expect(issued.code, issued.stderr).to.equal(0);
    const key = JSON.parse(issued.stdout) as { key: string; id: string; prefix: string; scopes: string[]; rateLimit: unknown };
    expect(key.key).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(key.scopes).to.deep.equal(['STUDENT_READ', 'CLUB_READ']);
    expect(key.rateLimit).to.deep.equal({ points: 50, durationSeconds: 60 });
    const stored = await db.models.apiKeys.findById(key.id).lean();
    expect(JSON.stringify(stored)).not.to.include(key.key);

    const ok = await t.request('/v1/clubs', { headers: { 'X-API-KEY': key.key } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('RateLimit-Policy')).to.equal('"default";q=50;w=60');

    const listed = JSON.parse((await campus(uri, 'keys', 'list', '--json')).stdout) as { id: string; state: string }[];
    expect(listed.find((k) => k.id === key.id)?.state).to.equal('active');
    expect((await campus(uri, 'keys', 'list')).stdout).not.to.include(key.key);

    const renewed = JSON.parse((await campus(uri, 'keys', 'renew', key.prefix, '--json')).stdout) as { expiresAt: string };
    expect(new Date(renewed.expiresAt).getTime() - Date.now()).to.be.within(29.9 * 86400e3, 30 * 86400e3);

    const rotated = JSON.parse((await campus(uri, 'keys', 'rotate', key.id, '--json')).stdout) as { key: string; scopes: string[] };
    expect(rotated.key).not.to.equal(key.key);
    expect(rotated.scopes).to.deep.equal(['STUDENT_READ', 'CLUB_READ']);
    await new Promise((r) => setTimeout(r, 1100)); // other processes see key changes within a second
    expect((await t.request('/v1/clubs', { headers: { 'X-API-KEY': key.key } })).status).to.equal(401);
    expect((await t.request('/v1/clubs', { headers: { 'X-API-KEY': rotated.key } })).status).to.equal(200);

    const revoked = await campus(uri, 'keys', 'revoke', rotated.key.slice(0, 8));
    expect(revoked.code).to.equal(0);
    expect(revoked.stdout).to.match(/^Revoked: .* revoked /);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await t.request('/v1/clubs', { headers: { 'X-API-KEY': rotated.key } })).status).to.equal(401);
  });

  it('explains bad input in one line and exits 1', async () => {
    const badScope = await campus(uri, 'keys', 'issue', '--scopes', 'STUDENT_READ,EVERYTHING');
    expect(badScope.code).to.equal(1);
    expect(badScope.stderr).to.equal('campus: Unknown scope EVERYTHING; allowed: STUDENT_READ, CLUB_READ, PROJECT_READ, NEIS_READ.\n');
    const badDays = await campus(uri, 'keys', 'issue', '--scopes', 'CLUB_READ', '--days', '31');
    expect(badDays.stderr).to.include('--days must be a whole number from 1 to 30');
    const unknown = await campus(uri, 'keys', 'revoke', 'ffffffff');
    expect(unknown.stderr).to.equal('campus: No API key with id or prefix ffffffff.\n');
    const noDemo = await campus(uri, 'seed');
    expect(noDemo.code).to.equal(1);
  });

  it('says what is missing when neither Go nor mongod can provide the embedded database', async () => {
    const home = mkdtempSync(join(tmpdir(), 'campus-nogo-'));
    try {
      const result = await runCampus(
        { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), DATA_DIR: join(home, 'data'), PATH: '/usr/bin:/bin' },
        ['db'],
        { clean: true },
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(
        'campus: MONGODB_URI is not set, and the embedded database cannot start: neither Go (needed once to build FerretDB) ' +
          'nor mongod was found on PATH. Install Go 1.24 or newer (https://go.dev/dl/), put a mongod on PATH, ' +
          'or set MONGODB_URI to a MongoDB server.\n',
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('every subcommand has --help', async () => {
    const commands = [
      ['serve'],
      ['db'],
      ['seed'],
      ['keys', 'issue'],
      ['keys', 'list'],
      ['keys', 'renew'],
      ['keys', 'rotate'],
      ['keys', 'revoke'],
    ];
    const helps = await Promise.all(commands.map((args) => campus(uri, ...args, '--help')));
    helps.forEach((help, i) => {
      const args = commands[i] ?? [];
      expect(help.code, args.join(' ')).to.equal(0);
      expect(help.stdout).to.include(`Usage: campus ${args.join(' ')}`);
    });
  });
});
