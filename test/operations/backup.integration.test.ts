import { TEST_POLICY } from '../helpers/factories.js';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Database } from '../../src/data/database.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { BackupError, restoreBackup, verifyArchive, writeBackup } from '../../src/data/operations/backup.js';
import { BackupScheduler } from '../../src/data/operations/backup-schedule.js';
import { SCHEMA_VERSION, migrate } from '../../src/data/migrations.js';
import { createLogger } from '../../src/logger.js';
import { OAuthStore } from '../../src/data/accounts/oauth-records.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { runCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { VERSION_KINDS } from '../../src/data/platform/versions.js';

/** Every document of every collection, by collection, in _id order. */
async function everything(db: Database): Promise<Record<string, unknown[]>> {
  const raw = db.client.db();
  const names = (await raw.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const out: Record<string, unknown[]> = {};
  for (const name of names) out[name] = await raw.collection(name).find({}).sort({ _id: 1 }).toArray();
  return out;
}

describe('operations: backup and restore (src/data/operations/backup.ts)', function () {
  this.timeout(120000);
  let source: Database & { drop(): Promise<void> };
  let dir: string;
  let archive: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'campus-backup-'));
    archive = join(dir, 'school.jsonl.gz');
    source = await createTestDatabase('backup_src');
    await seedDemoSchool(source);
    await new ApiKeyService(source, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], label: 'backup test' });
    await new OAuthStore(source).upsert('Grant', 'grant-1', { accountId: '1', clientId: 'c' }, 3600, {
      grantId: 'grant-1',
      accountId: '1',
    });
    await source.versions.bump('data');
  });
  after(async () => {
    await source.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every collection, and restores it into an empty database record for record', async () => {
    const lines: string[] = [];
    const summary = await writeBackup(source, archive, (line) => lines.push(line));
    expect(summary.collections.map((c) => c.name)).to.include.members([
      'students',
      'clubs',
      'projects',
      'api_keys',
      'oauth_records',
      'meta',
    ]);
    expect(lines.some((l) => /^students: \d+ documents$/.test(l))).to.equal(true);
    const original = await everything(source);
    expect(summary.documents).to.equal(Object.values(original).reduce((n, docs) => n + docs.length, 0));

    const target = await createTestDatabase('backup_dst');
    try {
      // Indexes exist in the empty target (createTestDatabase ensures them): still "empty".
      await restoreBackup(target, archive);
      const restored = await everything(target);
      const { meta: restoredMeta, ...restoredRest } = restored;
      const { meta: originalMeta, ...originalRest } = original;
      expect(restoredRest).to.deep.equal(originalRest);
      // Every version moved on from the archived one, so cached answers cannot survive a restore.
      const versions = (docs: unknown[] | undefined) =>
        (docs ?? [])
          .filter((d) => String((d as { _id: string })._id).startsWith('version:'))
          .map((d) => d as { _id: string; value: number })
          .sort((a, b) => a._id.localeCompare(b._id));
      expect(versions(restoredMeta).map((v) => v._id)).to.deep.equal(VERSION_KINDS.map((kind) => `version:${kind}`).sort());
      const archived = new Map(versions(originalMeta).map((v) => [v._id, v.value]));
      expect(versions(restoredMeta).filter((v) => v.value === archived.get(v._id))).to.deep.equal([]);
    } finally {
      await target.drop();
    }
  });

  it('refuses a non-empty database unless forced, and changes nothing when it refuses', async () => {
    await writeBackup(source, archive);
    const before = await everything(source);
    let error: unknown;
    try {
      await restoreBackup(source, archive);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(BackupError);
    expect((error as Error).message).to.match(
      /^the database is not empty \(.*students.*\); restore into an empty database, or pass --force to replace it\.$/,
    );
    expect(await everything(source)).to.deep.equal(before);
  });

  it('refuses a truncated archive and a tampered one before touching anything', async () => {
    await writeBackup(source, archive);
    const whole = readFileSync(archive);
    const truncated = join(dir, 'truncated.jsonl.gz');
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    const cutAtLine = join(dir, 'cut.jsonl.gz');
    const text = gunzipSync(whole).toString('utf8').split('\n');
    writeFileSync(cutAtLine, gzipSync(text.slice(0, -3).join('\n')));
    const tampered = join(dir, 'tampered.jsonl.gz');
    writeFileSync(tampered, gzipSync(gunzipSync(whole).toString('utf8').replace('"name":"홍건우"', '"name":"해커"')));

    const target = await createTestDatabase('backup_refuse');
    try {
      const empty = await everything(target);
      for (const [file, message] of [
        [truncated, /is not a readable backup archive \(unexpected end of file\)/],
        [cutAtLine, /has no manifest: the archive is truncated\.$/],
        [tampered, /does not match its checksum: the archive was altered or damaged\.$/],
      ] as const) {
        let error: unknown;
        try {
          await restoreBackup(target, file);
        } catch (err) {
          error = err;
        }
        expect(error, file).to.be.instanceOf(BackupError);
        expect((error as Error).message).to.match(message);
        expect(await everything(target)).to.deep.equal(empty);
      }
      const ok = await verifyArchive(archive);
      expect(ok.documents).to.be.greaterThan(200);
      expect(ok.schemaVersion).to.equal(0);
    } finally {
      await target.drop();
    }
  });
});

describe('operations: signed backups (BACKUP_KEY)', function () {
  this.timeout(120000);
  const KEY = 'a backup key of at least 32 characters';
  let source: Database & { drop(): Promise<void> };
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'campus-backup-signed-'));
    source = await createTestDatabase('backup_signed');
    await seedDemoSchool(source);
  });
  after(async () => {
    await source.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Edits a document, then recomputes every checksum as an attacker can: a valid checksum, no key. */
  function tamper(text: string, keepSignature: boolean): string {
    const lines = text.replace('"name":"홍건우"', '"name":"해커"').split('\n').filter(Boolean);
    const sha = (parts: string[]) =>
      createHash('sha256')
        .update(parts.map((l) => `${l}\n`).join(''))
        .digest('hex');
    const body = lines.slice(0, -1);
    const manifest = JSON.parse(lines.at(-1) ?? '') as {
      manifest: { collections: { name: string; count: number; sha256: string }[]; sha256: string; signature?: string };
    };
    for (const section of manifest.manifest.collections) {
      const start = body.indexOf(JSON.stringify({ collection: section.name }));
      section.sha256 = sha(body.slice(start + 1, start + 1 + section.count));
    }
    manifest.manifest.sha256 = sha(body);
    if (!keepSignature) delete manifest.manifest.signature;
    return [...body, JSON.stringify(manifest)].join('\n') + '\n';
  }

  it('a tampered archive with a valid checksum but no valid signature is refused; the genuine one restores', async () => {
    const file = join(dir, 'signed.jsonl.gz');
    const summary = await writeBackup(source, file, () => {}, { key: KEY });
    expect(summary.signed).to.equal(true);
    const text = gunzipSync(readFileSync(file)).toString('utf8');
    expect(text.trimEnd().split('\n').at(-1)).to.match(/"signature":"hmac-sha256:[0-9a-f]{64}"/);
    const forged = join(dir, 'forged.jsonl.gz');
    writeFileSync(forged, gzipSync(tamper(text, true)));
    const stripped = join(dir, 'stripped.jsonl.gz');
    writeFileSync(stripped, gzipSync(tamper(text, false)));
    // The checksums hold: without the key the stripped copy reads as an intact unsigned archive.
    expect((await verifyArchive(stripped)).documents).to.equal(summary.documents);

    const target = await createTestDatabase('backup_signed_target');
    try {
      for (const [file, message] of [
        [forged, /has no valid signature under BACKUP_KEY: the archive was altered, or written with another key\.$/],
        [stripped, /has no signature, and BACKUP_KEY is set: only signed archives are restored\.$/],
      ] as const) {
        const error = await restoreBackup(target, file, { signing: { key: KEY } }).catch((e: unknown) => e);
        expect(error, file).to.be.instanceOf(BackupError);
        expect((error as Error).message).to.match(message);
        expect(await target.models.students.countDocuments()).to.equal(0);
      }
      // Another key: refused too; no key: a signed archive cannot be checked, refused.
      const otherKey = await verifyArchive(file, { key: `${KEY}!` }).catch((e: unknown) => e);
      expect(otherKey).to.be.instanceOf(BackupError).with.property('message').that.includes('no valid signature');
      const noKey = await verifyArchive(file).catch((e: unknown) => e);
      expect(noKey).to.be.instanceOf(BackupError).with.property('message').that.includes('is signed: set BACKUP_KEY');
      const restored = await restoreBackup(target, file, { signing: { key: KEY } });
      expect(restored.documents).to.equal(summary.documents);
      expect(await target.models.students.countDocuments({ name: '해커' })).to.equal(0);
    } finally {
      await target.drop();
    }
  });
});

describe('operations: encrypted backups (campus backup --encrypt, BACKUP_KEY)', function () {
  this.timeout(120000);
  const KEY = 'a backup key of at least 32 characters';
  let source: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'campus-backup-encrypted-'));
    source = await createTestDatabase('backup_encrypted');
    await seedDemoSchool(source);
  });
  after(async () => {
    await source.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an encrypted archive holds no readable byte, restores with the key, and is refused without it, with another key, or altered', async () => {
    const file = join(dir, 'sealed.jsonl.gz');
    const summary = await writeBackup(source, file, () => {}, { key: KEY, encrypt: true });
    expect(summary).to.include({ signed: true, encrypted: true });
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 8).toString('latin1')).to.equal('CAMPUSE1');
    expect(() => gunzipSync(bytes)).to.throw();
    expect(bytes.includes(Buffer.from('hong1@gsm.hs.kr'))).to.equal(false);

    const altered = join(dir, 'altered.jsonl.gz');
    const flipped = Buffer.from(bytes);
    flipped[100] = (flipped[100] ?? 0) ^ 1;
    writeFileSync(altered, flipped);
    const target = await createTestDatabase('backup_encrypted_target');
    try {
      for (const [archive, key, message] of [
        [file, undefined, /sealed\.jsonl\.gz is encrypted: set BACKUP_KEY to the key it was written with\.$/],
        [file, `${KEY}!`, /sealed\.jsonl\.gz could not be decrypted with BACKUP_KEY: it was written with another key, or altered\.$/],
        [altered, KEY, /altered\.jsonl\.gz could not be decrypted with BACKUP_KEY: it was written with another key, or altered\.$/],
      ] as const) {
        const error = await restoreBackup(target, archive, { signing: { key } }).catch((e: unknown) => e);
        expect(error, `${archive} ${key ?? 'no key'}`).to.be.instanceOf(BackupError);
        expect((error as Error).message).to.match(message);
        expect(await target.models.students.countDocuments()).to.equal(0);
      }
      const restored = await restoreBackup(target, file, { signing: { key: KEY } });
      expect(restored.documents).to.equal(summary.documents);
      expect(await target.models.students.countDocuments()).to.equal(await source.models.students.countDocuments());
    } finally {
      await target.drop();
    }
  });

  it('campus backup --encrypt needs BACKUP_KEY; with it the archive is written encrypted and campus restore --check reads it', async () => {
    const env = { MONGODB_URI: source.uri };
    const file = join(dir, 'cli.jsonl.gz');
    const refused = await runCampus(env, ['backup', '--out', file, '--encrypt']);
    expect([refused.code, refused.stderr]).to.deep.equal([
      1,
      'campus: --encrypt needs BACKUP_KEY (at least 32 characters) in the environment.\n',
    ]);
    const written = await runCampus({ ...env, BACKUP_KEY: KEY }, ['backup', '--out', file, '--encrypt', '--json']);
    expect(written.code, written.stderr).to.equal(0);
    expect(JSON.parse(written.stdout)).to.include({ signed: true, encrypted: true });
    expect(written.stderr).to.not.include('not encrypted');
    const checked = await runCampus({ ...env, BACKUP_KEY: KEY }, ['restore', file, '--check']);
    expect(checked.code, checked.stderr).to.equal(0);
    expect(checked.stdout).to.match(/cli\.jsonl\.gz is intact: /);
    const noKey = await runCampus(env, ['restore', file, '--check']);
    expect(noKey.code).to.equal(1);
    expect(noKey.stderr).to.include('cli.jsonl.gz is encrypted: set BACKUP_KEY to the key it was written with.');
    const plain = await runCampus(env, ['backup', '--out', join(dir, 'plain.jsonl.gz')]);
    expect(plain.stderr).to.include('note: the archive is not encrypted (--encrypt): it holds personal data in clear; keep it safe');
  });
});

describe('operations: backups across schema versions', function () {
  this.timeout(60000);

  it("records the source's schema version; an archive from a newer schema is refused before anything is written", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'campus-schema-'));
    const source = await createTestDatabase('backup_schema_src');
    const target = await createTestDatabase('backup_schema_dst');
    try {
      await migrate(source);
      const current = join(dir, 'current.jsonl.gz');
      await writeBackup(source, current);
      expect((await verifyArchive(current)).schemaVersion).to.equal(SCHEMA_VERSION);

      await source.client
        .db()
        .collection('meta')
        .updateOne({ _id: 'schema' } as never, { $set: { version: SCHEMA_VERSION + 1 } });
      const newer = join(dir, 'newer.jsonl.gz');
      await writeBackup(source, newer);
      const empty = await everything(target);
      let error: unknown;
      try {
        await restoreBackup(target, newer);
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(BackupError);
      expect((error as Error).message).to.equal(
        `the archive comes from schema version ${SCHEMA_VERSION + 1}, newer than this code (${SCHEMA_VERSION}); restore it with the newer release.`,
      );
      expect(await everything(target)).to.deep.equal(empty);
    } finally {
      await source.drop();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('operations: scheduled backups (src/data/operations/backup-schedule.ts)', function () {
  this.timeout(60000);

  it('one instance per day writes the archive; the newest BACKUP_KEEP are kept', async () => {
    const db = await createTestDatabase('backup_schedule');
    const dir = mkdtempSync(join(tmpdir(), 'campus-scheduled-'));
    try {
      for (const old of ['campus-20200101-020000.jsonl.gz', 'campus-20200102-020000.jsonl.gz', 'notes.txt'])
        writeFileSync(join(dir, old), 'x');
      const options = {
        db,
        dir,
        time: '02:00',
        timeZone: 'Asia/Seoul',
        keep: 2,
        logger: createLogger('silent'),
        now: () => new Date('2026-11-23T01:00:00Z'),
      };
      const first = new BackupScheduler(options);
      const second = new BackupScheduler(options);
      const written = await first.runOnce();
      expect(written).to.equal(join(dir, 'campus-20261123-010000.jsonl.gz'));
      expect(await second.runOnce()).to.equal(undefined);
      expect(readdirSync(dir).sort()).to.deep.equal(['campus-20200102-020000.jsonl.gz', 'campus-20261123-010000.jsonl.gz', 'notes.txt']);
      expect((await verifyArchive(written ?? '')).collections.length).to.be.greaterThan(0);
    } finally {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
