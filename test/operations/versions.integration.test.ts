import { expect } from 'chai';
import { createTestDatabase } from '../helpers/database.js';
import type { Database } from '../../src/data/database.js';
import { DataVersions, VERSION_KINDS, type VersionStamp } from '../../src/data/platform/versions.js';

/**
 * The shared clock of changes (src/data/platform/versions.ts) under concurrent writers. Every cached
 * answer is valid for one version, so a bump that returns a kind to a value seen before would
 * bring back answers from before the change (a revoked key accepted again). FerretDB 1.24 applies
 * an update as read, modify, write without isolation, so concurrent `$inc`s lose increments and
 * a bump of one field can write back the old value of another; and the first upserts of a new
 * database race to create the document (CI once failed on that duplicate-key error).
 */
describe('operations: data versions, concurrent bumps', () => {
  let db: Database & { drop(): Promise<void> };

  before(async function () {
    this.timeout(60000);
    db = await createTestDatabase('versions');
  });
  after(async () => {
    await db.drop();
  });

  it('moves every kind in each of 10 rounds of concurrent bumps of all kinds from two processes, from an empty database on', async () => {
    const meta = db.connection.collection('meta');
    await meta.deleteMany({});
    const first = new DataVersions(meta);
    const second = new DataVersions(meta);
    const unmoved: string[] = [];
    for (let round = 0; round < 10; round++) {
      const before: VersionStamp = await first.readFresh();
      await Promise.all(VERSION_KINDS.flatMap((kind) => [first, second].map((p) => p.bump(kind))));
      const after = await second.readFresh();
      for (const kind of VERSION_KINDS) if (after[kind] === before[kind]) unmoved.push(`round ${round}: ${kind}`);
    }
    expect(unmoved).to.deep.equal([]);
  });
});
