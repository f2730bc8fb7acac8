import { expect } from 'chai';
import { AppStore } from '../../src/data/apps/store.js';
import type { Database } from '../../src/data/database.js';
import { createTestDatabase } from '../helpers/database.js';

describe('OAuth apps: AppStore.put (src/data/accounts/store.ts)', () => {
  let db: Database & { drop(): Promise<void> };

  before(async () => {
    db = await createTestDatabase('client_store');
  });

  after(async () => {
    await db?.drop();
  });

  it('puts of one new client at the same moment (two `campus serve` starting) all succeed, and one client stands', async () => {
    const store = new AppStore(db);
    for (let round = 0; round < 20; round++) {
      const id = `web-${round}`;
      const record = (name: string) => ({
        id,
        name,
        type: 'public' as const,
        secretHash: null,
        redirectUris: ['http://127.0.0.1:3000/web/callback'],
        postLogoutRedirectUris: [],
        scopes: ['self:read'],
        firstParty: true,
        pkce: 'required' as const,
      });
      await Promise.all([store.put(record('first')), store.put(record('second')), store.put(record('third'))]);
      const stored = await db.models.oauthClients.find({ _id: id }).lean<{ name: string }[]>();
      expect(stored).to.have.length(1);
      expect(['first', 'second', 'third']).to.include(stored[0]?.name);
    }
  });
});
