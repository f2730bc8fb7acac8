import { expect } from 'chai';
import { describeCounts } from '../../src/data/operations/backup.js';
import { counted } from '../../src/plural.js';

/** The counts `campus backup` and `campus restore` print (docs/operations.md, "Backups and restore"). */
describe('operations: backup counts in words', () => {
  it('one is singular; zero and many are plural', () => {
    expect([0, 1, 2, 13].map((n) => counted(n, 'document'))).to.deep.equal(['0 documents', '1 document', '2 documents', '13 documents']);
  });

  it('an archive is described by its documents and collections', () => {
    expect(describeCounts({ documents: 1, collections: ['accounts'] })).to.equal('1 document in 1 collection');
    expect(describeCounts({ documents: 13, collections: new Array<string>(18).fill('c') })).to.equal('13 documents in 18 collections');
  });
});
