import { expect } from 'chai';
import { ApiKeyService, API_SCOPES } from '../../src/data/keys/store.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { createAccount } from '../helpers/oauth.js';

/**
 * Budgets in front of the per-key ones (src/http/rate-limit.ts): all the keys of one
 * account share RATE_LIMIT_ACCOUNT and every key from one client address shares
 * RATE_LIMIT_ADDRESS, so more keys multiply neither; a key an operator gave its own limit is
 * counted against it alone; a refusal names its budget in the headers; a 304 spends nothing.
 */
describe('data API: rate limits per account and per address, in front of the per-key ones', function () {
  this.timeout(60000);
  let t: TestApp;

  before(async () => {
    // Small budgets so that the test reaches them: 4 per account, 7 per address, 100 per key.
    t = await buildTestApp('aggregate_limits', {
      surfaces: ['data'],
      env: { RATE_LIMIT_ACCOUNT: '4/60', RATE_LIMIT_ADDRESS: '7/60', TRUSTED_PROXIES: '127.0.0.1' },
    });
  });
  after(() => t.close());

  const issue = async (options: { owner?: number; rateLimit?: { points: number; durationSeconds: number } } = {}) =>
    (
      await new ApiKeyService(t.db, t.config.policy).issue({
        scopes: [...API_SCOPES],
        ...(options.owner === undefined ? {} : { ownerAccountId: options.owner }),
        ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
      })
    ).key;
  /** A request from `address` (the proxy's X-Forwarded-For, believed from TRUSTED_PROXIES). */
  const call = (key: string, address: string, headers: Record<string, string> = {}) =>
    t.request('/v1/clubs', { headers: { 'X-API-KEY': key, 'X-Forwarded-For': address, ...headers } });

  it('an account with three keys gets 4 requests a minute in all, not 300: the 5th is 429 naming the account budget', async () => {
    const owner = await createAccount(t.db, 'many-keys@gsm.hs.kr', 'many keys long password');
    const keys = [await issue({ owner }), await issue({ owner }), await issue({ owner })];
    for (const [i, key] of [keys[0], keys[1], keys[2], keys[0]].entries()) {
      const res = await call(key ?? '', '10.1.0.1');
      await expectOk(res);
      // A served answer tells the key's own budget, as before.
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=100;w=60');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal(i === 3 ? '98' : '99');
    }
    const refused = await call(keys[1] ?? '', '10.1.0.2');
    expect(refused.headers.get('ratelimit-policy')).to.equal('"account";q=4;w=60');
    expect(refused.headers.get('ratelimit')).to.match(/^"account";r=0;t=(59|60)$/);
    expect(refused.headers.get('x-ratelimit-limit')).to.equal('4');
    expect(refused.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(refused.headers.get('retry-after')).to.match(/^(59|60)$/);
    const body = await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS');
    expect(body.message).to.match(
      /^Too many requests from this key's account, all its keys together \(4 per 60 s\); retry after (59|60) seconds\.$/,
    );
    // A new key of the same account does not help; another account's key is served.
    const fourth = await issue({ owner });
    await expectEnvelope(await call(fourth, '10.1.0.3'), 429, 'TOO_MANY_REQUESTS');
    const other = await issue({ owner: await createAccount(t.db, 'other@gsm.hs.kr', 'other has a long password') });
    await expectOk(await call(other, '10.1.0.3'));
  });

  it("a request refused by the account's budget spends nothing of the address's", async () => {
    const owner = await createAccount(t.db, 'spent@gsm.hs.kr', 'spent has a long password');
    const key = await issue({ owner });
    for (let i = 0; i < 4; i++) await expectOk(await call(key, '10.2.0.1'));
    for (let i = 0; i < 2; i++) await expectEnvelope(await call(key, '10.2.0.1'), 429, 'TOO_MANY_REQUESTS');
    // 4 of the address's 7 are spent, not 6: three more requests from it are served, the next is not.
    const operatorKeys = await Promise.all(Array.from({ length: 4 }, () => issue()));
    for (const other of operatorKeys.slice(0, 3)) await expectOk(await call(other, '10.2.0.1'));
    const refused = await call(operatorKeys[3] ?? '', '10.2.0.1');
    expect(refused.headers.get('ratelimit-policy')).to.equal('"address";q=7;w=60');
    await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS');
  });

  it('one address with many keys gets 7 requests a minute in all: the 8th is 429 naming the address budget; another address is served', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => issue()));
    for (const key of keys.slice(0, 7)) await expectOk(await call(key, '10.3.0.1'));
    const refused = await call(keys[7] ?? '', '10.3.0.1');
    expect(refused.headers.get('ratelimit-policy')).to.equal('"address";q=7;w=60');
    expect(refused.headers.get('ratelimit')).to.match(/^"address";r=0;t=(59|60)$/);
    expect(refused.headers.get('x-ratelimit-limit')).to.equal('7');
    expect(refused.headers.get('x-ratelimit-remaining')).to.equal('0');
    const body = await expectEnvelope(refused, 429, 'TOO_MANY_REQUESTS');
    expect(body.message).to.match(
      /^Too many requests from this client address, all its keys together \(7 per 60 s\); retry after (59|60) seconds\.$/,
    );
    // The same key from another address is served: the budget is the address's, not the key's.
    const moved = await call(keys[7] ?? '', '10.3.0.2');
    await expectOk(moved);
    expect(moved.headers.get('x-ratelimit-remaining')).to.equal('99');
  });

  it("a key an operator gave its own limit is counted against it alone, whatever its address's budget", async () => {
    const keys = await Promise.all(Array.from({ length: 7 }, () => issue()));
    for (const key of keys) await expectOk(await call(key, '10.4.0.1'));
    await expectEnvelope(await call(keys[0] ?? '', '10.4.0.1'), 429, 'TOO_MANY_REQUESTS');
    const dashboard = await issue({ rateLimit: { points: 20, durationSeconds: 60 } });
    for (let i = 0; i < 10; i++) {
      const res = await call(dashboard, '10.4.0.1');
      await expectOk(res);
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=20;w=60');
    }
  });

  it('a conditional request answered 304 spends none of the budgets', async () => {
    const owner = await createAccount(t.db, 'etag@gsm.hs.kr', 'etag has a long password');
    const key = await issue({ owner });
    const first = await call(key, '10.5.0.1');
    await expectOk(first);
    const etag = first.headers.get('etag') ?? '';
    for (let i = 0; i < 10; i++) {
      const res = await call(key, '10.5.0.1', { 'If-None-Match': etag });
      expect(res.status).to.equal(304);
      await res.arrayBuffer();
    }
    // Three more of the account's 4 (and the address's 7) are still there.
    for (let i = 0; i < 3; i++) await expectOk(await call(key, '10.5.0.1'));
    await expectEnvelope(await call(key, '10.5.0.1'), 429, 'TOO_MANY_REQUESTS');
  });
});
