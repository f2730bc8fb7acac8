import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeProtectedHeader } from 'jose';
import { buildTestApp } from '../helpers/app.js';
import { runCampus, startCampus, type CliResult } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { expectOk } from '../helpers/expect.js';
import { authorize, postJson } from '../helpers/oauth.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { MIGRATIONS, SCHEMA_VERSION, schemaStatus } from '../../src/data/migrations.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';

/**
 * The operator's commands end to end, through the real `campus` command (src/cli): secrets for
 * production, backup and restore of a populated database, migrations at start-up under the lock.
 */

const campus = (uri: string, args: string[], stdin?: string) =>
  runCampus({ MONGODB_URI: uri, NEIS_SYNC_ENABLED: 'false' }, args, stdin === undefined ? {} : { stdin });

function expectSuccess(result: CliResult, what: string): void {
  expect(result.code, `${what}: ${result.stderr}`).to.equal(0);
}

/** Every document of every collection, by collection, in _id order. */
async function everything(db: Database): Promise<Record<string, unknown[]>> {
  const raw = db.client.db();
  const names = (await raw.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const out: Record<string, unknown[]> = {};
  for (const name of names) out[name] = await raw.collection(name).find({}).sort({ _id: 1 }).toArray();
  return out;
}

/** The same, without the version documents a restore moves on purpose. */
async function records(db: Database): Promise<Record<string, unknown[]>> {
  const all = await everything(db);
  return { ...all, meta: (all['meta'] ?? []).filter((d) => !String((d as { _id: unknown })._id).startsWith('version:')) };
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
}

describe('operations: through the campus command', function () {
  this.timeout(240000);
  const opened: Database[] = [];
  let dir: string;

  /** Opens a database of the suite's server and drops it after the file. */
  async function open(uri: string): Promise<Database> {
    const db = await openDatabase(uri);
    opened.push(db);
    return db;
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'campus-ops-'));
  });
  after(async () => {
    for (const db of opened) {
      await db.connection.dropDatabase().catch(() => {});
      await db.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  describe('campus secrets', () => {
    it('generate --json: the printed values start a production instance whose JWKS has the generated kid', async () => {
      const generated = await runCampus({}, ['secrets', 'generate', '--json']);
      expectSuccess(generated, 'secrets generate');
      expect(generated.stderr).to.equal('');
      const secrets = JSON.parse(generated.stdout) as { OAUTH_JWKS: string; OAUTH_COOKIE_KEYS: string };
      expect(Object.keys(secrets)).to.deep.equal(['OAUTH_JWKS', 'OAUTH_COOKIE_KEYS']);
      const [key] = (JSON.parse(secrets.OAUTH_JWKS) as { keys: Record<string, string>[] }).keys;
      expect(key).to.include({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      expect(key?.['kid']).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(key?.['d']).to.be.a('string');
      expect(secrets.OAUTH_COOKIE_KEYS).to.match(/^[A-Za-z0-9_-]{43}$/);

      const uri = testDatabaseUri('secrets_prod');
      await open(uri);
      const serve = await startCampus(
        {
          NODE_ENV: 'production',
          MONGODB_URI: uri,
          HOST: '127.0.0.1',
          PORT: String(await freePort()),
          AUTH_URL: 'https://auth.school.test',
          USERINFO_URL: 'https://me.school.test',
          BASE_URL: 'https://api.school.test',
          TRUSTED_PROXIES: '127.0.0.1',
          NEIS_SYNC_ENABLED: 'false',
          // Production asks for a mail server; nothing here sends mail.
          SMTP_URL: 'smtp://127.0.0.1:2525',
          ...secrets,
        },
        ['serve', '--json'],
      );
      try {
        const { url } = JSON.parse(serve.firstLine) as { url: string };
        // What the TLS proxy in front sends (docs/operations.md, "Running in production").
        const tls = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'auth.school.test' };
        const discovery = await fetch(`${url}/.well-known/openid-configuration`, { headers: tls });
        expect(discovery.status).to.equal(200);
        expect(await discovery.json()).to.include({
          issuer: 'https://auth.school.test',
          jwks_uri: 'https://auth.school.test/v1/oauth/jwks',
          userinfo_endpoint: 'https://me.school.test/userinfo',
        });
        const jwks = (await (await fetch(`${url}/v1/oauth/jwks`, { headers: tls })).json()) as { keys: Record<string, string>[] };
        expect(jwks.keys.map((k) => k['kid'])).to.deep.equal([key?.['kid']]);
        expect(jwks.keys[0]?.['d']).to.equal(undefined);
        // The probes answer plain HTTP from loopback in production; the data API does not.
        expect((await fetch(`${url}/livez`)).status).to.equal(200);
        expect((await fetch(`${url}/readyz`)).status).to.equal(200);
        expect((await fetch(`${url}/v1/health`)).status).to.equal(403);
      } finally {
        expect(await serve.stop()).to.equal(0);
      }
    });

    it('generate --out writes a 0600 file and refuses to overwrite it; rotate puts a new key first; retire keeps the first', async () => {
      const file = join(dir, 'secrets.env');
      const written = await runCampus({}, ['secrets', 'generate', '--out', file]);
      expectSuccess(written, 'secrets generate --out');
      expect(written.stdout).to.equal(`Wrote OAUTH_JWKS and OAUTH_COOKIE_KEYS to ${file} (mode 0600).\n`);
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      const text = readFileSync(file, 'utf8');
      const match = /^OAUTH_JWKS='(\{.*\})'\nOAUTH_COOKIE_KEYS=([A-Za-z0-9_-]{43})\n$/.exec(text);
      expect(match, text).to.not.equal(null);
      const [, jwks = '', cookieKey = ''] = match ?? [];

      const again = await runCampus({}, ['secrets', 'generate', '--out', file]);
      expect(again.code).to.equal(1);
      expect(again.stderr).to.equal(`campus: ${file} exists; choose a new file.\n`);
      expect(readFileSync(file, 'utf8')).to.equal(text);

      const kidsOf = (set: string) => (JSON.parse(set) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
      const [oldKid] = kidsOf(jwks);
      const rotated = await runCampus({ OAUTH_JWKS: jwks, OAUTH_COOKIE_KEYS: cookieKey }, ['secrets', 'rotate', '--json']);
      expectSuccess(rotated, 'secrets rotate');
      const next = JSON.parse(rotated.stdout) as { OAUTH_JWKS: string; OAUTH_COOKIE_KEYS: string };
      const kids = kidsOf(next.OAUTH_JWKS);
      expect(kids).to.have.length(2);
      expect(kids[1]).to.equal(oldKid);
      expect(kids[0]).to.not.equal(oldKid);
      const cookieKeys = next.OAUTH_COOKIE_KEYS.split(',');
      expect(cookieKeys).to.have.length(2);
      expect(cookieKeys[1]).to.equal(cookieKey);

      const retired = await runCampus(next, ['secrets', 'retire', '--json']);
      expectSuccess(retired, 'secrets retire');
      const last = JSON.parse(retired.stdout) as { OAUTH_JWKS: string; OAUTH_COOKIE_KEYS: string };
      expect(kidsOf(last.OAUTH_JWKS)).to.deep.equal([kids[0]]);
      expect(last.OAUTH_COOKIE_KEYS).to.equal(cookieKeys[0]);

      const without = await runCampus({ OAUTH_JWKS: '', OAUTH_COOKIE_KEYS: '' }, ['secrets', 'rotate']);
      expect(without.stderr).to.equal(
        'campus: OAUTH_JWKS and OAUTH_COOKIE_KEYS must be set: rotate and retire start from the keys of this environment.\n',
      );
    });
  });

  describe('campus backup and campus restore', () => {
    const ROOT = { email: 'root@school.test', password: 'a long pass phrase for backups' };
    let sourceUri: string;
    let source: Database;
    let archive: string;
    let port: number;
    let apiKey: string;
    let tokens: TokenAnswer;

    before(async () => {
      sourceUri = testDatabaseUri('ops_backup_src');
      source = await open(sourceUri);
      port = await freePort();
      // The demo school with its NEIS data, demo account and clients; a ROOT account; an API key.
      expectSuccess(await campus(sourceUri, ['seed', '--demo']), 'seed --demo');
      expectSuccess(
        await campus(sourceUri, ['accounts', 'create', '--email', ROOT.email, '--role', 'ROOT', '--password-stdin'], `${ROOT.password}\n`),
        'accounts create',
      );
      const issued = await campus(sourceUri, ['keys', 'issue', '--scopes', 'STUDENT_READ,NEIS_READ', '--label', 'backup', '--json']);
      expectSuccess(issued, 'keys issue');
      apiKey = (JSON.parse(issued.stdout) as { key: string }).key;

      // A live grant from a real authorization-code flow (login, consent, code, tokens).
      const t = await buildTestApp('ops_backup_src', { db: source, port });
      try {
        const login = await authorize(
          t,
          { client_id: DEMO_OAUTH.clientId, redirect_uri: DEMO_OAUTH.redirectUri, response_type: 'code', state: 'backup' },
          ROOT,
        );
        const exchanged = await postJson(t, '/v1/oauth/token', {
          grant_type: 'authorization_code',
          code: login.code,
          client_id: DEMO_OAUTH.clientId,
          client_secret: DEMO_OAUTH.clientSecret,
          redirect_uri: DEMO_OAUTH.redirectUri,
          code_verifier: login.verifier,
        });
        expect(exchanged.status).to.equal(200);
        tokens = (await exchanged.json()) as TokenAnswer;
      } finally {
        await t.close();
      }
      archive = join(dir, 'school.jsonl.gz');
    });

    it('backs up every collection with progress on stderr; restores into an empty database record for record; tokens and keys keep working', async () => {
      const backup = await campus(sourceUri, ['backup', '--out', archive, '--json']);
      expectSuccess(backup, 'backup');
      expect(statSync(archive).mode & 0o777).to.equal(0o600);
      const summary = JSON.parse(backup.stdout) as { file: string; documents: number; collections: { name: string; count: number }[] };
      expect(summary.file).to.equal(archive);
      const counts = Object.fromEntries(summary.collections.map((c) => [c.name, c.count]));
      for (const name of ['students', 'clubs', 'projects', 'accounts', 'oauth_clients', 'oauth_records', 'oauth_keys', 'api_keys'])
        expect(counts[name], name).to.be.greaterThan(0);
      for (const name of ['neis_meals', 'neis_schedules', 'neis_timetables', 'neis_state']) expect(counts[name], name).to.be.greaterThan(0);
      // Progress goes to stderr, one line per collection; the answer alone to stdout.
      expect(backup.stderr).to.match(/^students: \d+ documents$/m);
      expect(backup.stderr).to.match(/^neis_meals: \d+ documents$/m);

      // Secrets stay hashed: no API key, client secret or password appears in the archive.
      const text = gunzipSync(readFileSync(archive)).toString('utf8');
      for (const secret of [apiKey, DEMO_OAUTH.clientSecret, ROOT.password, DEMO_OAUTH.password])
        expect(text.includes(secret), 'a secret in the archive').to.equal(false);

      const targetUri = testDatabaseUri('ops_backup_dst');
      const target = await open(targetUri);
      const restore = await campus(targetUri, ['restore', archive, '--json']);
      expectSuccess(restore, 'restore');
      expect(restore.stderr).to.match(/^archive verified: \d+ documents in \d+ collections/m);
      expect(restore.stderr).to.match(/^restored \d+ documents in \d+ collections$/m);
      expect((JSON.parse(restore.stdout) as { documents: number }).documents).to.equal(summary.documents);
      expect(await records(target)).to.deep.equal(await records(source));

      // An app on the restored database: the refresh token of the grant, its access token and
      // the API key work as before.
      const t = await buildTestApp('ops_backup_dst', { db: target, port });
      try {
        const before = await t.request('/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(before.status).to.equal(200);
        const refreshed = await postJson(t, '/v1/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: DEMO_OAUTH.clientId,
          client_secret: DEMO_OAUTH.clientSecret,
        });
        expect(refreshed.status).to.equal(200);
        const next = (await refreshed.json()) as TokenAnswer;
        expect(decodeProtectedHeader(next.access_token).kid).to.equal(decodeProtectedHeader(tokens.access_token).kid);
        const me = await t.request('/userinfo', { headers: { authorization: `Bearer ${next.access_token}` } });
        expect(me.status).to.equal(200);
        expect(await me.json()).to.include({ email: ROOT.email, role: 'ROOT' });
        const students = await expectOk<{ students: unknown[] }>(
          await t.request('/v1/students?studentId=1', { headers: { 'X-API-KEY': apiKey } }),
        );
        expect(students.students).to.have.length(1);
        const meals = await t.request('/v1/neis/meals', { headers: { 'X-API-KEY': apiKey } });
        expect((await expectOk<unknown[]>(meals)).length).to.be.greaterThan(0);
      } finally {
        await t.close();
      }

      // --check reads the whole archive and changes nothing.
      const check = await runCampus({}, ['restore', archive, '--check']);
      expectSuccess(check, 'restore --check');
      expect(
        check.stdout.startsWith(
          `${archive} is intact: ${summary.documents} documents in ${summary.collections.length} collections, taken `,
        ),
      ).to.equal(true);
      expect(check.stdout).to.match(new RegExp(`, taken \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z at schema version ${SCHEMA_VERSION}\\.\\n$`));
    });

    it('restores a small archive into a brand-new database (whose collections the connection creates meanwhile)', async () => {
      // A small archive is verified before mongoose has created the models' collections of the
      // new database in the background; the switch must not trip over them.
      const smallUri = testDatabaseUri('ops_backup_small');
      const small = await open(smallUri);
      expectSuccess(await campus(smallUri, ['keys', 'issue', '--scopes', 'CLUB_READ']), 'keys issue');
      const file = join(dir, 'small.jsonl.gz');
      expectSuccess(await campus(smallUri, ['backup', '--out', file]), 'backup');
      const copyUri = testDatabaseUri('ops_backup_small_copy');
      const copy = await open(copyUri);
      const restored = await campus(copyUri, ['restore', file]);
      expectSuccess(restored, 'restore');
      expect(await records(copy)).to.deep.equal(await records(small));
    });

    it('refuses a non-empty database, a truncated archive and a tampered one, changing nothing', async () => {
      const whole = readFileSync(archive);
      const truncated = join(dir, 'truncated.jsonl.gz');
      writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length * 0.6)));
      const lines = gunzipSync(whole).toString('utf8').split('\n');
      const cut = join(dir, 'cut.jsonl.gz');
      writeFileSync(cut, gzipSync(lines.slice(0, -2).join('\n')));
      // An account made ROOT by editing the archive.
      const tampered = join(dir, 'tampered.jsonl.gz');
      expect(lines.join('\n')).to.include('"role":"USER"');
      writeFileSync(tampered, gzipSync(lines.join('\n').replace('"role":"USER"', '"role":"ROOT"')));

      // A non-empty database: the source itself.
      const before = await everything(source);
      const busy = await campus(sourceUri, ['restore', archive]);
      expect(busy.code).to.equal(1);
      expect(busy.stderr).to.match(
        /\ncampus: restore refused, nothing was changed: the database is not empty \((\w+, )*students(, \w+)*\); restore into an empty database, or pass --force to replace it\.\n$/,
      );
      expect(await everything(source)).to.deep.equal(before);

      // Damaged archives, into an empty database and over a full one with --force.
      const emptyUri = testDatabaseUri('ops_backup_refused');
      const empty = await open(emptyUri);
      const documents = async () => Object.values(await everything(empty)).flat();
      const staging = async () => Object.keys(await everything(empty)).filter((name) => name.startsWith('restore_staging'));
      expect(await documents()).to.deep.equal([]);
      for (const [file, reason] of [
        [truncated, /is not a readable backup archive \(unexpected end of file\)\.$/],
        [cut, /has no manifest: the archive is truncated\.$/],
        [tampered, /does not match its checksum: the archive was altered or damaged\.$/],
      ] as const) {
        for (const [uri, args] of [
          [emptyUri, ['restore', file]],
          [sourceUri, ['restore', file, '--force']],
        ] as const) {
          const refused = await campus(uri, [...args]);
          expect(refused.code, `${file} ${args.join(' ')}`).to.equal(1);
          const last = refused.stderr.trimEnd().split('\n').pop() ?? '';
          expect(last).to.match(/^campus: restore refused, nothing was changed: /);
          expect(last).to.match(reason);
        }
        // No document was written and no staging collection is left.
        expect(await documents()).to.deep.equal([]);
        expect(await staging()).to.deep.equal([]);
        expect(await everything(source)).to.deep.equal(before);
      }
    });
  });

  describe('migrations', () => {
    it('two `campus serve` starting at once against a database at an old schema apply each migration once', async () => {
      const uri = testDatabaseUri('ops_migrate_race');
      const db = await open(uri);
      // A database written before schema versions existed (version 0): data, no schema document.
      await seedDemoSchool(db);
      expect((await schemaStatus(db)).databaseVersion).to.equal(0);
      const env = async () => ({ MONGODB_URI: uri, PORT: String(await freePort()), NEIS_SYNC_ENABLED: 'false' });
      const [first, second] = await Promise.all([
        startCampus(await env(), ['serve', '--json']),
        startCampus(await env(), ['serve', '--json']),
      ]);
      try {
        const status = await schemaStatus(db);
        expect(status.databaseVersion).to.equal(SCHEMA_VERSION);
        expect(status.history.map((h) => h.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
        // Each migration was applied by one of the two processes.
        const pids = [first.child.pid, second.child.pid].map(String);
        for (const h of status.history) expect(pids).to.include(h.by.split(':')[1]);
        expect(
          await db.client
            .db()
            .collection('meta')
            .findOne({ _id: 'migration-lock' } as never),
        ).to.equal(null);
        for (const serve of [first, second]) {
          const { url } = JSON.parse(serve.firstLine) as { url: string };
          expect((await fetch(`${url}/readyz`)).status).to.equal(200);
        }
      } finally {
        expect(await first.stop()).to.equal(0);
        expect(await second.stop()).to.equal(0);
      }
    });

    it('migrate --status shows where a database stands without changing it; migrate and writing commands bring it up to date', async () => {
      const uri = testDatabaseUri('ops_migrate_status');
      const db = await open(uri);
      await seedDemoSchool(db);
      const pending = MIGRATIONS.map((m) => `${m.version} ${m.name}`).join('; ');

      const human = await campus(uri, ['migrate', '--status']);
      expectSuccess(human, 'migrate --status');
      expect(human.stdout).to.equal(
        [
          `Database schema version 0; this code's ${SCHEMA_VERSION}.`,
          `Pending (applied by \`campus migrate\` or the next \`campus serve\`): ${pending}.`,
          'History: none.',
          '',
        ].join('\n'),
      );
      const json = await campus(uri, ['migrate', '--status', '--json']);
      expect(JSON.parse(json.stdout)).to.deep.equal({
        databaseVersion: 0,
        codeVersion: SCHEMA_VERSION,
        pending: MIGRATIONS.map(({ version, name }) => ({ version, name })),
        history: [],
      });
      // Reading commands leave the schema alone.
      expectSuccess(await campus(uri, ['keys', 'list']), 'keys list');
      expect((await schemaStatus(db)).databaseVersion).to.equal(0);

      const migrated = await campus(uri, ['migrate', '--json']);
      expectSuccess(migrated, 'migrate');
      expect(migrated.stderr).to.include(`migrating the database to schema ${SCHEMA_VERSION}: `);
      const result = JSON.parse(migrated.stdout) as {
        databaseVersion: number;
        pending: unknown[];
        applied: { version: number; by: string }[];
      };
      expect(result.databaseVersion).to.equal(SCHEMA_VERSION);
      expect(result.pending).to.deep.equal([]);
      expect(result.applied.map((a) => a.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));

      const after = await campus(uri, ['migrate', '--status']);
      const lines = after.stdout.trimEnd().split('\n');
      expect(lines.slice(0, 3)).to.deep.equal([
        `Database schema version ${SCHEMA_VERSION}; this code's ${SCHEMA_VERSION}.`,
        'Nothing pending.',
        'History:',
      ]);
      expect(lines.slice(3)).to.have.length(MIGRATIONS.length);
      expect(lines[3]).to.match(/^ {2}1 create the indexes of every collection: applied \d{4}-\d\d-\d\dT[\d:.]+Z by .+:\d+:[0-9a-f]{8}$/);
      const again = await campus(uri, ['migrate']);
      expect(again.stdout.split('\n')[1]).to.equal('Nothing to apply.');

      // A command that writes migrates first.
      const fresh = testDatabaseUri('ops_migrate_writer');
      const freshDb = await open(fresh);
      expectSuccess(await campus(fresh, ['keys', 'issue', '--scopes', 'CLUB_READ']), 'keys issue');
      expect((await schemaStatus(freshDb)).databaseVersion).to.equal(SCHEMA_VERSION);
    });

    it('a database newer than the code: serve and writing commands refuse with one line; --status says so', async () => {
      const uri = testDatabaseUri('ops_migrate_newer');
      const db = await open(uri);
      await db.client
        .db()
        .collection('meta')
        .insertOne({ _id: 'schema', version: SCHEMA_VERSION + 1, history: [] } as never);
      const line = `campus: The database is at schema version ${SCHEMA_VERSION + 1}, newer than this code (${SCHEMA_VERSION}): run the newer release, or restore a backup taken before the upgrade.\n`;
      const serve = await runCampus({ MONGODB_URI: uri, PORT: String(await freePort()), NEIS_SYNC_ENABLED: 'false' }, ['serve'], {
        timeoutMs: 60000,
      });
      expect([serve.code, serve.stderr]).to.deep.equal([1, line]);
      const issue = await campus(uri, ['keys', 'issue', '--scopes', 'CLUB_READ']);
      expect([issue.code, issue.stderr]).to.deep.equal([1, line]);
      expect(await db.models.apiKeys.countDocuments()).to.equal(0);
      const status = await campus(uri, ['migrate', '--status']);
      expectSuccess(status, 'migrate --status');
      expect(status.stdout.split('\n').slice(0, 2)).to.deep.equal([
        `Database schema version ${SCHEMA_VERSION + 1}; this code's ${SCHEMA_VERSION}.`,
        'The database is newer than this code: run the newer release.',
      ]);
    });
  });

  describe('scheduled backups in campus serve', () => {
    it('BACKUP_DIR: serve logs the next run; a directory it cannot write stops the start-up with one line', async () => {
      const uri = testDatabaseUri('ops_scheduled');
      await open(uri);
      const backupDir = join(dir, 'scheduled');
      const serve = await startCampus(
        {
          MONGODB_URI: uri,
          PORT: String(await freePort()),
          NEIS_SYNC_ENABLED: 'false',
          LOG_LEVEL: 'info',
          BACKUP_DIR: backupDir,
          BACKUP_TIME: '04:30',
          SCHOOL_TIMEZONE: 'Asia/Seoul',
        },
        ['serve'],
        // The log line (the command's own line says it too, but the logs arrive in batches).
        /"msg":"listening on/,
      );
      try {
        // The log lines (JSON, with LOG_LEVEL) beside the command's own lines of people's text.
        const logs = serve.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
        const next = logs.find((l) => l['msg'] === 'next scheduled backup');
        expect(next).to.include({ dir: backupDir, keep: 7 });
        const at = new Date(String(next?.['nextRunAt']));
        // 04:30 in Seoul is 19:30 UTC, within the next 24 hours.
        expect([at.getUTCHours(), at.getUTCMinutes()]).to.deep.equal([19, 30]);
        expect(at.getTime() - Date.now()).to.be.within(0, 24 * 3600 * 1000);
        expect(statSync(backupDir).mode & 0o777).to.equal(0o700);
      } finally {
        expect(await serve.stop()).to.equal(0);
      }

      const blocked = join(dir, 'a-file');
      writeFileSync(blocked, '');
      const refused = await runCampus(
        { MONGODB_URI: uri, PORT: String(await freePort()), NEIS_SYNC_ENABLED: 'false', BACKUP_DIR: join(blocked, 'backups') },
        ['serve'],
        { timeoutMs: 60000 },
      );
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.match(
        /^campus: BACKUP_DIR: cannot write to .*a-file\/backups \(ENOTDIR: not a directory, mkdir '.*'\)\.\n$/,
      );
    });
  });

  it('every new command has --help and --json', async () => {
    const commands = [['secrets', 'generate'], ['secrets', 'rotate'], ['secrets', 'retire'], ['backup'], ['restore'], ['migrate']];
    const helps = await Promise.all(commands.map((args) => runCampus({}, [...args, '--help'])));
    helps.forEach((help, i) => {
      const args = commands[i] ?? [];
      expect(help.code, args.join(' ')).to.equal(0);
      expect(help.stdout).to.include(`Usage: campus ${args.join(' ')}`);
      expect(help.stdout).to.include('--json');
    });
  });
});
