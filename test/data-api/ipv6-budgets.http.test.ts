import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, expectOk } from '../helpers/expect.js';
import { issueKey } from '../helpers/factories.js';

/**
 * The data API's per-address budgets key an IPv6 client by its /64 (src/http/address.ts), as the
 * login throttle and the self-service budgets do: the address budget in front of the keys
 * (RATE_LIMIT_ADDRESS), the public endpoints' budget (PUBLIC_RATE_LIMIT) and failed
 * authentications (API_KEY_FAILURE_LIMIT). Addresses are told apart through the trusted proxy
 * 127.0.0.1 and X-Forwarded-For.
 */
describe('data API: budgets per client address, an IPv6 address counts by its /64', function () {
  this.timeout(60000);
  let t: TestApp;

  before(async () => {
    t = await buildTestApp('ipv6_budgets', {
      surfaces: ['data'],
      env: { TRUSTED_PROXIES: '127.0.0.1', RATE_LIMIT_ADDRESS: '4/60', PUBLIC_RATE_LIMIT: '3/60', API_KEY_FAILURE_LIMIT: '3/60' },
    });
  });
  after(() => t?.close());

  /** A request from `address` (the proxy's X-Forwarded-For). */
  const from = (address: string, headers: Record<string, string> = {}) => ({ headers: { 'X-Forwarded-For': address, ...headers } });

  it('keys from addresses of one /64 share its address budget (the 5th request is 429); another /64 is served', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => issueKey(t.db)));
    const sameSlash64 = ['2001:db8:a:1::1', '2001:db8:a:1::2', '2001:db8:a:1:ffff:ffff:ffff:ffff', '2001:0DB8:000A:0001::9'];
    for (const [i, address] of sameSlash64.entries())
      await expectOk(await t.request('/v1/clubs', from(address, { 'X-API-KEY': keys[i] ?? '' })));
    const refused = await t.request('/v1/clubs', from('2001:db8:a:1::5', { 'X-API-KEY': keys[4] ?? '' }));
    expect(refused.headers.get('ratelimit-policy')).to.equal('"address";q=4;w=60');
    await expectEnvelope(
      refused,
      429,
      'TOO_MANY_REQUESTS',
      'Too many requests from this client address, all its keys together (4 per 60 s)',
    );
    const next = await t.request('/v1/clubs', from('2001:db8:a:2::1', { 'X-API-KEY': keys[4] ?? '' }));
    await expectOk(next);
    expect(next.headers.get('ratelimit-policy')).to.equal('"default";q=100;w=60');
  });

  it('the public project list: one /64 gets PUBLIC_RATE_LIMIT in all (the 4th is 429); another /64 is served', async () => {
    for (const address of ['2001:db8:b:1::1', '2001:db8:b:1::2', '2001:db8:b:1:1:2:3:4'])
      await expectOk(await t.request('/v1/public/projects', from(address)));
    const refused = await t.request('/v1/public/projects', from('2001:db8:b:1::ab'));
    await expectEnvelope(refused.clone(), 429, 'TOO_MANY_REQUESTS');
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('ratelimit-policy')).to.equal('"default";q=3;w=60');
    await expectOk(await t.request('/v1/public/projects', from('2001:db8:b:2::1')));
  });

  it('failed authentications from one /64 are counted together (the 4th is 429); another /64 still gets its 401', async () => {
    const bad = { 'X-API-KEY': randomUUID() };
    for (const address of ['2001:db8:c:1::1', '2001:db8:c:1::2', '2001:db8:c:1::3'])
      await expectEnvelope(await t.request('/v1/clubs', from(address, bad)), 401, 'UNAUTHORIZED');
    const refused = await t.request('/v1/clubs', from('2001:db8:c:1:9::9', bad));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    await expectEnvelope(
      refused,
      429,
      'TOO_MANY_REQUESTS',
      `Too many failed authentications from this address (3 per 60 s); retry after ${retryAfter} seconds.`,
    );
    await expectEnvelope(await t.request('/v1/clubs', from('2001:db8:c:2::1', bad)), 401, 'UNAUTHORIZED');
  });
});
