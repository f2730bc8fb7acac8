import { TEST_POLICY } from '../helpers/factories.js';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createTestDatabase } from '../helpers/database.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { ApiKeyService, API_SCOPES } from '../../src/data/keys/store.js';
import { RememberedLookups } from '../../src/data/platform/remembered.js';
import { joinVersionBus, type VersionBus } from '../../src/data/platform/version-bus.js';
import { DataVersions, cacheTarget } from '../../src/data/platform/versions.js';
import { UnauthorizedError } from '../../src/errors/index.js';
import { ApiKeyAuthenticator } from '../../src/http/api-key.js';
import { createLogger } from '../../src/logger.js';

/**
 * Targeted invalidation (src/data/platform/versions.ts): a change of one key,
 * grant, account or client makes every process forget what rests on it, and only that. Two
 * database handles stand for two processes (the one that serves, and the CLI or instance that
 * revokes), joined through the real Redis (src/data/platform/version-bus.ts); database reads are counted
 * through the data layer's telemetry.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';

describe('operations: targeted invalidation of remembered keys and grants', function () {
  this.timeout(60000);
  let serving: Database & { uri: string; drop(): Promise<void> };
  let revoking: Database;
  const redis: Redis[] = [];
  const buses: VersionBus[] = [];
  /** Reads of `api_keys` made by the serving process. */
  let keyReads = 0;

  before(async () => {
    serving = await createTestDatabase('targeted');
    revoking = await openDatabase(serving.uri);
    for (const db of [serving, revoking]) {
      const client = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      await new Promise<void>((done) => client.once('ready', () => done()));
      redis.push(client);
      buses.push(await joinVersionBus(db.versions, client, serving.name, createLogger('silent')));
    }
    serving.telemetry.onOperation((sample) => {
      if (sample.collection === 'api_keys') keyReads += 1;
    });
  });
  after(async () => {
    for (const bus of buses) await bus.close();
    for (const client of redis) client.disconnect();
    await revoking.close();
    await serving.drop();
  });

  /**
   * Runs a change made through the revoking process and waits until the serving process heard of
   * it: PUBLISH returns once Redis passed the news on, and the serving side reads it on its next
   * turn of the event loop (at once, but not within the same turn).
   */
  async function heard(kind: 'keys' | 'oauth', change: () => Promise<unknown>): Promise<void> {
    const before = serving.versions.changesOf(kind);
    await change();
    const started = Date.now();
    while (serving.versions.changesOf(kind) === before) {
      if (Date.now() - started > 500) throw new Error(`the serving process did not hear of the ${kind} change within 500 ms`);
      await new Promise((done) => setImmediate(done));
    }
  }

  /** Whether the serving process accepts `key`, and how many reads of keys that took. */
  async function check(authenticator: ApiKeyAuthenticator, key: string): Promise<{ accepted: boolean; reads: number }> {
    const before = keyReads;
    // A promise either way: the authenticator answers a remembered key at once, others later.
    const accepted = await Promise.resolve()
      .then(() => authenticator.authenticate(key))
      .then(
        () => true,
        (err: unknown) => {
          if (err instanceof UnauthorizedError) return false;
          throw err;
        },
      );
    return { accepted, reads: keyReads - before };
  }

  it('a revocation of key A at another process refuses A at once and leaves key B remembered (no read)', async () => {
    const keys = new ApiKeyService(revoking, TEST_POLICY);
    let a = { key: '', summary: { id: '' } };
    let b = { key: '' };
    await heard('keys', async () => (a = await keys.issue({ scopes: [...API_SCOPES], label: 'A' })));
    await heard('keys', async () => (b = await keys.issue({ scopes: [...API_SCOPES], label: 'B' })));
    const authenticator = new ApiKeyAuthenticator(serving, TEST_POLICY);
    expect((await check(authenticator, a.key)).accepted).to.equal(true);
    expect((await check(authenticator, b.key)).accepted).to.equal(true);
    expect(await check(authenticator, b.key)).to.deep.equal({ accepted: true, reads: 0 });

    await heard('keys', () => keys.revoke(a.summary.id));
    expect((await check(authenticator, a.key)).accepted).to.equal(false);
    expect(await check(authenticator, b.key)).to.deep.equal({ accepted: true, reads: 0 });

    // A loop of issues, rotations and revocations of other keys does not flush B either.
    for (let round = 0; round < 5; round++) {
      let other = { key: '', summary: { id: '' } };
      await heard('keys', async () => (other = await keys.issue({ scopes: [...API_SCOPES], label: `round ${round}` })));
      expect((await check(authenticator, other.key)).accepted).to.equal(true);
      let rotated = { key: '' };
      await heard('keys', async () => (rotated = await keys.rotate(other.summary.id)));
      expect((await check(authenticator, rotated.key)).accepted).to.equal(true);
      await heard('keys', () => keys.revoke(other.summary.id));
      expect((await check(authenticator, rotated.key)).accepted).to.equal(false);
      expect(await check(authenticator, b.key), `round ${round}`).to.deep.equal({ accepted: true, reads: 0 });
    }
    expect((await check(authenticator, a.key)).accepted).to.equal(false);
  });

  it('a change of all of one account forgets its keys and nobody else’s', async () => {
    const keys = new ApiKeyService(revoking, TEST_POLICY);
    // What an owned key reads rests on its owner's standing (src/auth/policy.ts): the owners exist.
    const now = new Date();
    for (const id of [4101, 4102])
      await revoking.models.accounts.create({
        _id: id,
        email: `owner${id}@gsm.hs.kr`,
        passwordHash: 'x',
        role: 'USER',
        createdAt: now,
        updatedAt: now,
      });
    let mine = { key: '' };
    let theirs = { key: '' };
    await heard('keys', async () => (mine = await keys.issue({ scopes: [...API_SCOPES], label: 'mine', ownerAccountId: 4101 })));
    await heard('keys', async () => (theirs = await keys.issue({ scopes: [...API_SCOPES], label: 'theirs', ownerAccountId: 4102 })));
    const authenticator = new ApiKeyAuthenticator(serving, TEST_POLICY);
    await check(authenticator, mine.key);
    await check(authenticator, theirs.key);
    await heard('oauth', () => revoking.versions.bumpAccount(4101));
    expect(await check(authenticator, theirs.key)).to.deep.equal({ accepted: true, reads: 0 });
    expect(await check(authenticator, mine.key)).to.deep.equal({ accepted: true, reads: 1 });
  });

  it('a change the serving process did not hear of (no announcement) makes it forget every key within the clock', async () => {
    const keys = new ApiKeyService(revoking, TEST_POLICY);
    let b = { key: '' };
    await heard('keys', async () => (b = await keys.issue({ scopes: [...API_SCOPES], label: 'B2' })));
    const authenticator = new ApiKeyAuthenticator(serving, TEST_POLICY);
    await check(authenticator, b.key);
    expect((await check(authenticator, b.key)).reads).to.equal(0);
    // A third process without Redis: its bump reaches the others only through the stored version.
    const silent = new DataVersions(serving.connection.collection('meta'));
    await silent.bump('keys', [cacheTarget.key('someone-else')]);
    await new Promise((done) => setTimeout(done, 1100));
    expect(await check(authenticator, b.key)).to.deep.equal({ accepted: true, reads: 1 });
    expect(await check(authenticator, b.key)).to.deep.equal({ accepted: true, reads: 0 });
  });

  it('remembered grants: a revoked grant goes, another grant stays; two changes that raced forget everything', async () => {
    const loads: string[] = [];
    const grants = new RememberedLookups<string, { grantId: string; accountId: string }>(
      serving.versions,
      'oauth',
      100,
      async (id) => {
        loads.push(id);
        return { grantId: id, accountId: `acct-${id}` };
      },
      (id, value) => [cacheTarget.grant(id), cacheTarget.account(value.accountId)],
    );
    await grants.get('g1');
    await grants.get('g2');
    await heard('oauth', () => revoking.versions.bump('oauth', [cacheTarget.grant('g1')]));
    loads.length = 0;
    await grants.get('g2');
    await grants.get('g1');
    expect(loads).to.deep.equal(['g1']);

    // Two changes that both replaced the same value: one of them may have been lost, so neither
    // is trusted to say what changed.
    const stamp = await serving.versions.readFresh();
    serving.versions.hear({ kind: 'oauth', targets: [cacheTarget.grant('x')], previous: stamp.oauth, version: 11 });
    serving.versions.hear({ kind: 'oauth', targets: [cacheTarget.grant('y')], previous: stamp.oauth, version: 12 });
    loads.length = 0;
    await grants.get('g1');
    await grants.get('g2');
    expect(loads).to.deep.equal(['g1', 'g2']);
  });
});
