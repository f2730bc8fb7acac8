import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import { openDatabase, type Database } from '../../src/data/database.js';
import { isDuplicateKey } from '../../src/data/platform/errors.js';
import { GroupedInserts, InsertRefused } from '../../src/data/platform/grouped-inserts.js';
import { testDatabaseUri } from '../helpers/database.js';

interface Row {
  _id: string;
}

/**
 * Group commit of the refresh grant's writes (src/data/platform/grouped-inserts.ts) on the real database:
 * what is sent, what is stored, and who is told what when a document of a group is refused.
 */
describe("OAuth apps: grouped inserts of the refresh grant's writes", () => {
  let db: Database;
  const commands: string[] = [];
  const rows = () => db.client.db().collection<Row>('grouped_rows');
  const stored = async () =>
    (
      await rows()
        .find({}, { sort: { _id: 1 } })
        .toArray()
    ).map((row) => row._id);
  const grouped = (max?: number) => new GroupedInserts<Row>((docs) => rows().insertMany(docs, { ordered: true }), max);

  before(async () => {
    db = await openDatabase(testDatabaseUri('grouped_inserts'), { monitorCommands: true });
    db.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.commandName === 'insert') commands.push((event.command['documents'] as Row[]).map((row) => row._id).join(','));
    });
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });
  beforeEach(async () => {
    await rows().deleteMany({});
    commands.length = 0;
  });

  it('sends the first insert at once and those that come meanwhile together, in order, as one command', async () => {
    const inserts = grouped();
    await Promise.all([
      inserts.insert([{ _id: 'a1' }, { _id: 'a2' }]),
      inserts.insert([{ _id: 'b1' }, { _id: 'b2' }]),
      inserts.insert([{ _id: 'c1' }]),
      inserts.insert([{ _id: 'd1' }, { _id: 'd2' }]),
    ]);
    expect(commands).to.deep.equal(['a1,a2', 'b1,b2,c1,d1,d2']);
    expect(await stored()).to.deep.equal(['a1', 'a2', 'b1', 'b2', 'c1', 'd1', 'd2']);
  });

  it('answers each caller only once its own documents are stored', async () => {
    const inserts = grouped();
    const first = inserts.insert([{ _id: 'a1' }]);
    const second = inserts.insert([{ _id: 'b1' }]);
    await first;
    expect(await stored()).to.deep.equal(['a1']);
    await second;
    expect(await stored()).to.deep.equal(['a1', 'b1']);
  });

  it('keeps a group within its size, never splitting one caller’s documents', async () => {
    const inserts = grouped(3);
    await Promise.all([
      inserts.insert([{ _id: 'a1' }]),
      inserts.insert([{ _id: 'b1' }, { _id: 'b2' }]),
      inserts.insert([{ _id: 'c1' }, { _id: 'c2' }]),
      inserts.insert([{ _id: 'd1' }, { _id: 'd2' }, { _id: 'd3' }, { _id: 'd4' }]),
    ]);
    expect(commands).to.deep.equal(['a1', 'b1,b2', 'c1,c2', 'd1,d2,d3,d4']);
  });

  it('on a refused document: those before it are stored, its caller is told which, those after go out again', async () => {
    await rows().insertOne({ _id: 'taken' });
    commands.length = 0;
    const inserts = grouped();
    const outcomes = await Promise.allSettled([
      inserts.insert([{ _id: 'a1' }]),
      inserts.insert([{ _id: 'b1' }, { _id: 'b2' }]),
      inserts.insert([{ _id: 'c1' }, { _id: 'taken' }, { _id: 'c3' }]),
      inserts.insert([{ _id: 'd1' }, { _id: 'd2' }]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const refused = (outcomes[2] as PromiseRejectedResult).reason as unknown;
    expect(refused).to.be.instanceOf(InsertRefused);
    expect((refused as InsertRefused).index).to.equal(1);
    expect(isDuplicateKey((refused as InsertRefused).cause)).to.equal(true);
    // The ordered insert stopped at "taken": c1 before it is stored, c3 never was; d went again.
    expect(commands).to.deep.equal(['a1', 'b1,b2,c1,taken,c3,d1,d2', 'd1,d2']);
    expect(await stored()).to.deep.equal(['a1', 'b1', 'b2', 'c1', 'd1', 'd2', 'taken']);
  });
});
