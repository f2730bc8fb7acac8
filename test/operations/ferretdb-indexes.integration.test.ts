import { expect } from 'chai';
import { DatabaseSync } from 'node:sqlite';
import type { Database } from '../../src/data/database.js';
import { isDuplicateKey } from '../../src/data/platform/errors.js';
import { createTestDatabase, testDatabaseEngine, testSqliteFile } from '../helpers/database.js';

/**
 * FerretDB 1.24 cannot use the indexes it makes for its own lookups (tools/ferretdb/indexes.go);
 * the launcher makes ones it can use, and these tests read the query plans FerretDB reports for
 * its real statements (its `explain` runs the backend's EXPLAIN on the SQL it would run). Should
 * a FerretDB release change the shape of its SQL, the plans stop naming our indexes and these
 * fail. FerretDB's update and delete by `_id` use the same expression as its find (over SQLite,
 * `_ferretdb_sjson->'$._id'`; over PostgreSQL they use its own btree on `_jsonb->'_id'`), after a
 * find with the same filter, so the find's plan stands for all three.
 */
describe('operations: indexes FerretDB can use (tools/ferretdb/indexes.go)', function () {
  this.timeout(60000);
  let engine: ReturnType<typeof testDatabaseEngine>;
  let db: Database & { drop(): Promise<void> };

  before(async function () {
    engine = testDatabaseEngine();
    // A real MongoDB serves these lookups with its own `_id` index; there is nothing to check.
    if (engine !== 'ferretdb' && engine !== 'ferretdb-postgresql') this.skip();
    db = await createTestDatabase('ferretdb_indexes');
  });

  after(async () => {
    await db?.drop();
  });

  /**
   * The index that serves a lookup by `_id`: over SQLite FerretDB's own unique one, remade on its
   * queries' expression (`<table>__id_`); over PostgreSQL the launcher's GIN index beside it.
   */
  const idIndex = (collection: string) => new RegExp(`^${collection}_[0-9a-f]{8}${engine === 'ferretdb' ? '__id_' : '_campus__id'}$`);

  const collections = () => Object.values(db.connection.models).map((model) => model.collection.collectionName);

  it('every collection of the service is looked up by `_id` through an index', async () => {
    const unindexed: string[] = [];
    for (const name of collections()) {
      const used = await indexesUsed(db, name, { _id: 'RefreshToken:sha256:x' });
      if (!used.some((index) => idIndex(name).test(index))) unindexed.push(`${name}: ${used.join(', ') || 'a scan'}`);
    }
    expect(unindexed).to.deep.equal([]);
  });

  it('a lookup by `_id` stays an index search in a collection of 2,000 records', async () => {
    await fill(db, 'oauth_records', 2000);
    const used = await indexesUsed(db, 'oauth_records', { _id: 'RefreshToken:sha256:1999' });
    expect(used).to.have.length(1);
    expect(used[0]).to.match(idIndex('oauth_records'));
  });

  it("over SQLite, `_id` has one index, FerretDB's own unique one, remade on the expression its queries use", async function () {
    if (engine !== 'ferretdb') this.skip();
    const schema = new DatabaseSync(testSqliteFile(db.name), { readOnly: true });
    try {
      const indexes = schema
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'oauth_records_%'`)
        .all() as { name: string; sql: string }[];
      expect(indexes).to.have.length(1);
      expect(indexes[0]?.name).to.match(/^oauth_records_[0-9a-f]{8}__id_$/);
      expect(indexes[0]?.sql).to.match(
        /^CREATE UNIQUE INDEX "oauth_records_[0-9a-f]{8}__id_" ON "oauth_records_[0-9a-f]{8}" \(_ferretdb_sjson->'\$\._id'\)$/,
      );
    } finally {
      schema.close();
    }
  });

  it('over SQLite, a database indexed by earlier launchers gets the one `_id` index at the next ensureIndexes', async function () {
    if (engine !== 'ferretdb') this.skip();
    const file = testSqliteFile(db.name);
    // FerretDB writes its own index with a double-quoted label, which SQLite takes as a string only when asked to.
    const schema = new DatabaseSync(file, { timeout: 10000, enableDoubleQuotedStringLiterals: true });
    const oauthIndexes = () =>
      schema
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'oauth_records_%' ORDER BY name`)
        .all()
        .map((row) => ({ name: String(row['name']), sql: String(row['sql']) }));
    try {
      const [own] = oauthIndexes();
      const table = /ON "([^"]+)"/.exec(own?.sql ?? '')?.[1] ?? '';
      // As FerretDB made it, beside the index earlier launchers added.
      schema.exec(`DROP INDEX "${table}__id_"`);
      schema.exec(`CREATE UNIQUE INDEX "${table}__id_" ON "${table}" (_ferretdb_sjson->"_id")`);
      schema.exec(`CREATE INDEX "${table}_campus__id" ON "${table}" (_ferretdb_sjson->'$._id')`);
      expect(oauthIndexes().map((index) => index.name)).to.deep.equal([`${table}__id_`, `${table}_campus__id`]);
      await db.ensureIndexes();
      expect(oauthIndexes()).to.deep.equal([
        { name: `${table}__id_`, sql: `CREATE UNIQUE INDEX "${table}__id_" ON "${table}" (_ferretdb_sjson->'$._id')` },
      ]);
    } finally {
      schema.close();
    }
  });

  it('a second document with the same `_id` is still refused as a duplicate key (E11000)', async () => {
    const records = db.connection.collection<{ _id: string; kind: string }>('oauth_records');
    await records.insertOne({ _id: 'RefreshToken:sha256:twice', kind: 'RefreshToken' });
    const refused = await records.insertOne({ _id: 'RefreshToken:sha256:twice', kind: 'Claim' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isDuplicateKey(refused)).to.equal(true);
    expect(await records.countDocuments({ _id: 'RefreshToken:sha256:twice' })).to.equal(1);
    expect((await records.findOne({ _id: 'RefreshToken:sha256:twice' }))?.kind).to.equal('RefreshToken');
  });

  it('over PostgreSQL, what a grant issued is found through an index on grantId', async function () {
    // Over SQLite FerretDB pushes no filter but `_id` down to SQL: no index can serve it there.
    if (engine !== 'ferretdb-postgresql') this.skip();
    await fill(db, 'oauth_records', 2000);
    const used = await indexesUsed(db, 'oauth_records', { kind: 'RefreshToken', grantId: 'grant-7' });
    expect(used).to.have.length(1);
    expect(used[0]).to.match(/^oauth_records_[0-9a-f]{8}_campus_grantId$/);
  });

  it('a collection keeps `_id` and its unique indexes only: the others serve no FerretDB query and are dropped', async () => {
    const accounts = db.connection.collection('accounts');
    // As earlier code made it, for MongoDB: an index on a field no FerretDB query can use.
    await accounts.createIndex({ approval: 1 });
    expect((await accounts.indexes()).map((index) => index.name).sort()).to.deep.equal(['_id_', 'approval_1', 'email_1']);
    await db.ensureIndexes();
    expect((await accounts.indexes()).map((index) => index.name).sort()).to.deep.equal(['_id_', 'email_1']);
    expect((await db.connection.collection('oauth_records').indexes()).map((index) => index.name)).to.deep.equal(['_id_']);
  });

  it('a collection dropped and made again (a restore) is indexed again by ensureIndexes', async () => {
    await db.connection.dropCollection('email_codes');
    await db.ensureIndexes();
    const used = await indexesUsed(db, 'email_codes', { _id: 'RESET:someone@school.test' });
    expect(used).to.have.length(1);
    expect(used[0]).to.match(idIndex('email_codes'));
  });
});

/** Fills a collection with `count` records shaped like refresh tokens, 20 to a grant (idempotent). */
async function fill(db: Database, collection: string, count: number): Promise<void> {
  const records = db.connection.collection<{ _id: string }>(collection);
  if ((await records.countDocuments({})) >= count) return;
  const docs = Array.from({ length: count }, (_, i) => ({
    _id: `RefreshToken:sha256:${i}`,
    kind: 'RefreshToken',
    grantId: `grant-${i % (count / 20)}`,
    payload: 'x'.repeat(300),
    expiresAt: new Date(Date.now() + 86_400_000),
  }));
  await records.insertMany(docs);
}

/**
 * The indexes the backend's plan for FerretDB's find uses: over SQLite the `EXPLAIN QUERY PLAN`
 * rows ("SEARCH t USING INDEX i (<expr>=?)"), over PostgreSQL the JSON plan's "Index Name"s.
 * The find itself runs first: SQLite's EXPLAIN does not check the schema version, so a pooled
 * connection that has run no statement since the launcher made an index explains with the schema
 * it had; a statement that runs notices the change and is prepared again (the find refreshes the
 * connection, which FerretDB's pool hands out again next, most recently used first).
 */
async function indexesUsed(db: Database, collection: string, filter: Record<string, unknown>): Promise<string[]> {
  await db.client.db().collection(collection).findOne(filter);
  const explained = await db.client.db().command({ explain: { find: collection, filter }, verbosity: 'queryPlanner' });
  const plan: unknown = (explained['queryPlanner'] as { Plan?: unknown } | undefined)?.Plan;
  if (Array.isArray(plan)) {
    return plan.flatMap((row) => {
      const match = /USING (?:COVERING )?INDEX (\S+)/.exec(String(row));
      return match?.[1] ? [match[1]] : [];
    });
  }
  const names: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const { ['Index Name']: name, Plans: children } = node as { 'Index Name'?: unknown; Plans?: unknown };
    if (typeof name === 'string') names.push(name);
    if (Array.isArray(children)) children.forEach(walk);
  };
  walk(plan);
  return names;
}
