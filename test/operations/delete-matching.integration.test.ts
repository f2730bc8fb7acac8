import { expect } from 'chai';
import { MongoServerError, type Collection } from 'mongodb';
import { openDatabase, type Database } from '../../src/data/database.js';
import { deleteMatching } from '../../src/data/platform/delete-matching.js';
import { testDatabaseEngine, testDatabaseUri } from '../helpers/database.js';

interface Row {
  _id: number;
  expired: boolean;
}

/** More documents than FerretDB over SQLite deletes in one statement (32,766). */
const MANY = 33_000;
const KEPT = 100;

/**
 * Deletes that match more documents than one FerretDB statement can name
 * (src/data/platform/delete-matching.ts): the sweeps of expired tokens, pruned events and deleted
 * webhooks' deliveries must catch up however far behind they fell.
 */
describe('operations: deleting many documents', function () {
  this.timeout(120_000);
  let db: Database;
  let rows: Collection<Row>;

  before(async () => {
    db = await openDatabase(testDatabaseUri('delete_matching'));
    rows = db.client.db().collection<Row>('rows');
    for (let start = 0; start < MANY; start += 5000) {
      const ids = Array.from({ length: Math.min(5000, MANY - start) }, (_, i) => start + i);
      await rows.insertMany(ids.map((id) => ({ _id: id, expired: id >= KEPT })));
    }
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });

  // First: it deletes nothing, and leaves every document for the next test.
  it('is needed: over SQLite, FerretDB refuses one deleteMany of that many', async function () {
    if (testDatabaseEngine() !== 'ferretdb') this.skip();
    const refused = await rows.deleteMany({ expired: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(MongoServerError);
    expect((refused as MongoServerError).code).to.equal(1);
    expect((refused as MongoServerError).message).to.match(/too many SQL variables/);
    expect(await rows.countDocuments({})).to.equal(MANY);
  });

  it(`deletes ${(MANY - KEPT).toLocaleString('en')} matching documents and keeps the rest`, async () => {
    expect(await deleteMatching(rows, { expired: true })).to.equal(MANY - KEPT);
    expect(await rows.countDocuments({})).to.equal(KEPT);
    expect(await rows.countDocuments({ expired: true })).to.equal(0);
  });
});
