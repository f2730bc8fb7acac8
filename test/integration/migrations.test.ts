import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError, migrate, schemaStatus } from '../../src/data/migrations.js';
import { openDatabase } from '../../src/data/database.js';
import { createTestDatabase, testDatabaseUri } from '../helpers/database.js';

describe('operations: schema migrations (src/data/migrations.ts)', function () {
  this.timeout(60000);

  it('an empty database is brought to the code version, and a second run applies nothing', async () => {
    const db = await createTestDatabase('migrate_fresh');
    try {
      expect((await schemaStatus(db)).databaseVersion).to.equal(0);
      const applied = await migrate(db);
      expect(applied.map((m) => m.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
      expect(await migrate(db)).to.deep.equal([]);
      const status = await schemaStatus(db);
      expect(status).to.include({ databaseVersion: SCHEMA_VERSION, codeVersion: SCHEMA_VERSION });
      expect(status.pending).to.deep.equal([]);
    } finally {
      await db.drop();
    }
  });

  it('two instances starting at once against an old schema migrate once; the other waits', async () => {
    const uri = testDatabaseUri('migrate_race');
    const first = await openDatabase(uri);
    const second = await openDatabase(uri);
    try {
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
      expect(applied.map((m) => m.by)).to.deep.equal(MIGRATIONS.map(() => 'survivor'));
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
