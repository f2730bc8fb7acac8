import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import { MIGRATIONS, NEW_DATABASE, SCHEMA_VERSION, SchemaTooNewError, migrate, schemaStatus } from '../../src/data/migrations.js';
import { openDatabase } from '../../src/data/database.js';
import { createTestDatabase, testDatabaseUri } from '../helpers/database.js';

describe('operations: schema migrations (src/data/migrations.ts)', function () {
  this.timeout(60000);

  it('a brand-new database is created at the current schema in one line: its indexes, one history entry; a second run applies nothing', async () => {
    const db = await openDatabase(testDatabaseUri('migrate_fresh'));
    try {
      expect((await schemaStatus(db)).databaseVersion).to.equal(0);
      const lines: string[] = [];
      const applied = await migrate(db, { owner: 'first', progress: (line) => lines.push(line) });
      expect(lines).to.deep.equal([`created the database at schema ${SCHEMA_VERSION}`]);
      expect(applied.map(({ version, name, by }) => ({ version, name, by }))).to.deep.equal([
        { version: SCHEMA_VERSION, name: NEW_DATABASE, by: 'first' },
      ]);
      // What the first migration would have made: every collection with its unique indexes.
      const accountIndexes = await db.models.accounts.collection.indexes();
      expect(accountIndexes.filter((index) => index.unique).map((index) => index.key)).to.deep.include({ email: 1 });
      expect(await migrate(db, { progress: (line) => lines.push(line) })).to.deep.equal([]);
      expect(lines).to.have.length(1);
      const status = await schemaStatus(db);
      expect(status).to.include({ databaseVersion: SCHEMA_VERSION, codeVersion: SCHEMA_VERSION });
      expect(status.pending).to.deep.equal([]);
      expect(status.history.map((h) => [h.version, h.name])).to.deep.equal([[SCHEMA_VERSION, NEW_DATABASE]]);
    } finally {
      await db.connection.dropDatabase();
      await db.close();
    }
  });

  it('a database holding data but no schema version (older code wrote it) still migrates step by step, one line each', async () => {
    // Empty collections (as ensureIndexes leaves them) do not make a database old; a document does.
    const db = await createTestDatabase('migrate_old');
    try {
      await db.client
        .db()
        .collection('students')
        .insertOne({ _id: 1, name: 'Kim' } as never);
      const lines: string[] = [];
      const applied = await migrate(db, { progress: (line) => lines.push(line) });
      expect(applied.map((m) => m.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
      expect(lines).to.deep.equal(MIGRATIONS.map((m) => `migrating the database to schema ${m.version}: ${m.name}`));
    } finally {
      await db.drop();
    }
  });

  it('two instances starting at once against an old schema migrate once; the other waits', async () => {
    const uri = testDatabaseUri('migrate_race');
    const first = await openDatabase(uri);
    const second = await openDatabase(uri);
    try {
      // A database written before schema versions existed: data, no schema document.
      await first.client
        .db()
        .collection('students')
        .insertOne({ _id: 1, name: 'Kim' } as never);
      const [a, b] = await Promise.all([
        migrate(first, { owner: 'instance-a', pollMs: 20 }),
        migrate(second, { owner: 'instance-b', pollMs: 20 }),
      ]);
      // Exactly one of them applied every migration; the other applied none.
      expect([a.length, b.length].sort()).to.deep.equal([0, MIGRATIONS.length]);
      const { history } = await schemaStatus(first);
      expect(history.map((h) => h.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
      expect(
        await first.client
          .db()
          .collection('meta')
          .findOne({ _id: 'migration-lock' } as never),
      ).to.equal(null);
    } finally {
      await first.connection.dropDatabase();
      await first.close();
      await second.close();
    }
  });

  it('a lock left by a crashed migrator lapses and is taken over', async () => {
    const db = await createTestDatabase('migrate_stale');
    try {
      await db.client
        .db()
        .collection('meta')
        .insertOne({ _id: 'migration-lock', owner: 'crashed', expiresAt: new Date(Date.now() - 1000) } as never);
      const applied = await migrate(db, { owner: 'survivor', pollMs: 10 });
      // The lapsed lock is no data: the database is still brand-new.
      expect(applied.map((m) => [m.version, m.by])).to.deep.equal([[SCHEMA_VERSION, 'survivor']]);
    } finally {
      await db.drop();
    }
  });

  it('refuses a database newer than the code', async () => {
    const db: Database & { drop(): Promise<void> } = await createTestDatabase('migrate_newer');
    try {
      await db.client
        .db()
        .collection('meta')
        .insertOne({ _id: 'schema', version: SCHEMA_VERSION + 1 } as never);
      let error: unknown;
      try {
        await migrate(db);
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(SchemaTooNewError);
      expect((error as Error).message).to.equal(
        `The database is at schema version ${SCHEMA_VERSION + 1}, newer than this code (${SCHEMA_VERSION}): run the newer release, or restore a backup taken before the upgrade.`,
      );
    } finally {
      await db.drop();
    }
  });
});
