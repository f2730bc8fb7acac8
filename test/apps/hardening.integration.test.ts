import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/data/database.js';
import { OAuthStore, recordKey } from '../../src/data/accounts/oauth-records.js';
import { AccountService, AccountValidationError } from '../../src/oauth/accounts.js';
import { createAdapterFactory } from '../../src/oauth/adapter.js';
import { AppService } from '../../src/oauth/apps.js';
import { testDatabaseUri } from '../helpers/database.js';

/** The authorization server's storage against the real database (FerretDB in CI): ids that are never reused, single use that holds under races. */
describe('OAuth apps: hardening on the real database', () => {
  let db: Database;
  let offsetMs = 0;
  let store: OAuthStore;
  let accounts: AccountService;

  before(async () => {
    db = await openDatabase(testDatabaseUri('oauth_hardening'));
    await db.ensureIndexes();
    store = new OAuthStore(db, () => new Date(Date.now() + offsetMs));
    accounts = new AccountService(db);
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });
  beforeEach(() => {
    offsetMs = 0;
  });

  describe('account ids (the sub of access tokens)', () => {
    it('after delete-then-create the new id is greater than every id ever given', async () => {
      const given: number[] = [];
      for (const name of ['a', 'b', 'c'])
        given.push((await accounts.create({ email: `${name}@ids.test`, password: 'a long password' })).id);
      // Delete the newest account, and then every account: the counter still only goes up.
      await accounts.delete('c@ids.test');
      const afterNewest = (await accounts.create({ email: 'd@ids.test', password: 'a long password' })).id;
      expect(afterNewest).to.be.greaterThan(Math.max(...given));
      given.push(afterNewest);
      for (const email of ['a@ids.test', 'b@ids.test', 'd@ids.test']) await accounts.delete(email);
      const afterAll = (await accounts.create({ email: 'e@ids.test', password: 'a long password' })).id;
      expect(afterAll).to.be.greaterThan(Math.max(...given));
      expect(Number.isSafeInteger(afterAll) && afterAll > 0).to.equal(true);
    });

    it('concurrent creations get distinct ids; a refused one (duplicate email) gives no id twice', async () => {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, i) => accounts.create({ email: `p${i}@ids.test`, password: 'a long password' })),
      );
      const ids = created.map((a) => a.id);
      expect(new Set(ids).size).to.equal(10);
      const before = Math.max(...ids);
      await accounts.create({ email: 'p0@ids.test', password: 'a long password' }).catch(() => undefined);
      const next = (await accounts.create({ email: 'q@ids.test', password: 'a long password' })).id;
      expect(next).to.be.greaterThan(before);
    });

    it('continues above accounts created before the counter existed (no claims yet)', async () => {
      const top = (await db.models.accounts.findOne({}).sort({ _id: -1 }).lean())?._id ?? 0;
      const now = new Date();
      await db.models.accounts.create({
        _id: top + 100,
        email: 'old@ids.test',
        passwordHash: 'x',
        role: 'USER',
        createdAt: now,
        updatedAt: now,
      });
      expect((await accounts.create({ email: 'new@ids.test', password: 'a long password' })).id).to.equal(top + 101);
    });

    it('an email longer than 254 characters is refused before the pattern runs', async () => {
      let error: unknown;
      await accounts
        .create({ email: `${'a'.repeat(243)}@school.test`, password: 'a long password' })
        .catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(AccountValidationError);
      expect((error as Error).message).to.equal('--email is longer than 254 characters.');
      const started = performance.now();
      expect(await accounts.verifyLogin(`a@${'a.'.repeat(50000)}@`, 'whatever')).to.equal(null);
      expect(performance.now() - started).to.be.below(1000);
    });
  });

  describe('single use of codes and refresh tokens', () => {
    it('of 20 concurrent consumes of one record exactly one wins (10 rounds)', async () => {
      for (let round = 0; round < 10; round++) {
        await store.upsert('AuthorizationCode', `race-${round}`, { kind: 'AuthorizationCode' }, 300, { grantId: `g-race-${round}` });
        const wins = await Promise.all(Array.from({ length: 20 }, () => store.consume('AuthorizationCode', `race-${round}`)));
        expect(wins.filter(Boolean), `round ${round}`).to.have.length(1);
      }
    });

    it('a claim outlives the revocation of its grant: a redemption that read the record before still loses', async () => {
      await store.upsert('RefreshToken', 'rt-1', { kind: 'RefreshToken', grantId: 'g-1' }, 3600, { grantId: 'g-1' });
      expect(await store.consume('RefreshToken', 'rt-1')).to.equal(true);
      await store.revokeGrant('g-1');
      // The provider may save a token again under the same id only by replaying it: still used.
      await store.upsert('RefreshToken', 'rt-1', { kind: 'RefreshToken', grantId: 'g-1' }, 3600, { grantId: 'g-1' });
      expect(await store.consume('RefreshToken', 'rt-1')).to.equal(false);
      // Claims go with the sweep once their record would have expired.
      offsetMs = 3601 * 1000;
      await store.sweepExpired();
      expect(await db.models.oauthRecords.countDocuments({ _id: `${recordKey('RefreshToken', 'rt-1')}#claim` })).to.equal(0);
    });

    it('the adapter turns a lost claim into invalid_grant and revokes the grant', async () => {
      const adapter = createAdapterFactory(store, new AppService(db, { isProduction: false }));
      await adapter('Grant').upsert('g-2', { kind: 'Grant', jti: 'g-2' }, 3600);
      await adapter('AuthorizationCode').upsert('c-2', { kind: 'AuthorizationCode', grantId: 'g-2' }, 300);
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => adapter('AuthorizationCode').consume('c-2')));
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      for (const r of results) {
        if (r.status === 'rejected')
          expect(r.reason).to.include({ error: 'invalid_grant', error_detail: 'authorization code already used' });
      }
      expect(await adapter('Grant').find('g-2')).to.equal(undefined);
    });
  });
});
