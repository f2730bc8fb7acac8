import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { TestApp } from '../helpers/app.js';
import { startCampus, type RunningCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { buildStudent, insertSchool, issueKey, TEST_POLICY } from '../helpers/factories.js';
import { authorize, createAccount, createClient, REDIRECT_URI } from '../helpers/oauth.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { AccountStore } from '../../src/data/accounts/store.js';
import { findStanding } from '../../src/data/accounts/standing.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { joinVersionBus, type VersionBus } from '../../src/data/platform/version-bus.js';
import { createLogger } from '../../src/logger.js';

/**
 * Two real `campus serve` processes on one database and one Redis (several processes may share
 * them): a data change is a new ETag at the other at once, not after the version
 * clock's one-second cache (src/data/platform/versions.ts, src/data/platform/version-bus.ts, wired in
 * src/main.ts); a grant revoked through one is refused at the other's userinfo at once; the
 * Redis rate limit is one budget across both. Both processes are started once (each takes a
 * few seconds); the database's own name keeps its Redis channel and keys apart from other runs.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const USER = { email: 'two.processes@school.test', password: 'a long enough passphrase 42' };
/** "At once": well under the version clock's one second. */
const AT_ONCE_MS = 500;

interface Served {
  readonly url: string;
  readonly process: RunningCampus;
}

describe('operations: two campus serve processes on one database and one Redis', function () {
  this.timeout(180000);
  let db: Database;
  let redis: Redis;
  let bus: VersionBus;
  let a: Served;
  let b: Served;

  before(async () => {
    const uri = testDatabaseUri('two_processes');
    db = await openDatabase(uri);
    const [portA, portB] = [await freePort(), await freePort()];
    const origin = `http://127.0.0.1:${portA}`;
    // One public origin for both, as behind one load balancer: a token issued through one
    // names the issuer and userinfo address the other expects.
    const env = {
      MONGODB_URI: uri,
      REDIS_URL,
      HOST: '127.0.0.1',
      AUTH_URL: origin,
      USERINFO_URL: origin,
      BASE_URL: origin,
      NEIS_SYNC_ENABLED: 'false',
    };
    // One after the other: the first migrates and makes the development signing key.
    a = await serve({ ...env, PORT: String(portA) });
    b = await serve({ ...env, PORT: String(portB) });
    // This test process writes as a third instance would: joined to the same channel.
    redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise<void>((done) => redis.once('ready', () => done()));
    bus = await joinVersionBus(db.versions, redis, db.name, createLogger('silent'));
  });
  after(async () => {
    await a?.process.stop();
    await b?.process.stop();
    await bus?.close();
    redis?.disconnect();
    await db.connection.dropDatabase().catch(() => {});
    await db.close();
  });

  async function serve(env: Record<string, string>): Promise<Served> {
    const process = await startCampus(env, ['serve', '--json']);
    return { url: (JSON.parse(process.firstLine) as { url: string }).url, process };
  }

  it('a data change is a new ETag at both processes at once, not after the one-second clock', async () => {
    await insertSchool(db, { students: [1, 2, 3].map((id) => buildStudent({ _id: id })) });
    const key = await issueKey(db);
    const etagAt = async (server: Served) => {
      const res = await fetch(`${server.url}/v1/students?size=5`, { headers: { 'X-API-KEY': key } });
      expect(res.status).to.equal(200);
      await res.arrayBuffer();
      return res.headers.get('etag');
    };
    const before = await etagAt(a);
    expect(await etagAt(b)).to.equal(before);

    for (const server of [a, b]) {
      // The process has just read the version: without the bus it would keep it for a second.
      const held = await etagAt(server);
      await db.models.students.updateOne({ _id: 2 }, { $set: { name: `Renamed for ${server.url}` } });
      await db.versions.bump('data');
      const changed = Date.now();
      let etag = await etagAt(server);
      while (etag === held && Date.now() - changed < 2000) {
        await new Promise((r) => setTimeout(r, 10));
        etag = await etagAt(server);
      }
      const waited = Date.now() - changed;
      expect(etag, server.url).not.to.equal(held);
      expect(waited, `${server.url} saw the change after ${waited} ms`).to.be.lessThan(AT_ONCE_MS);
    }
    // Both agree on the newest answer, byte for byte.
    const after = await etagAt(a);
    expect(after).not.to.equal(before);
    expect(await etagAt(b)).to.equal(after);
  });

  it('a grant revoked through one process is refused at the other’s userinfo at once', async () => {
    await createAccount(db, USER.email, USER.password);
    const created = await createClient(db, { firstParty: true });
    const client = { client_id: created.client.id, client_secret: created.secret ?? '' };
    const atA = { url: a.url, request: (path: string, init?: RequestInit) => fetch(`${a.url}${path}`, init) } as unknown as TestApp;
    const { code, verifier } = await authorize(
      atA,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', scope: 'self:read' },
      USER,
    );
    const post = (server: Served, path: string, body: Record<string, string>) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const issued = await post(a, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: code ?? '',
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier ?? '',
      ...client,
    });
    expect(issued.status, await issued.clone().text()).to.equal(200);
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string };
    const userinfoAt = (server: Served) => fetch(`${server.url}/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });

    const before = await userinfoAt(b);
    expect(before.status, await before.clone().text()).to.equal(200);
    expect(((await before.json()) as { email: string }).email).to.equal(USER.email);

    const revoked = await post(a, '/v1/oauth/revoke', { token: tokens.access_token, ...client });
    expect(revoked.status).to.equal(200);
    const at = Date.now();
    // The very next request at the other process, with no wait.
    const after = await userinfoAt(b);
    expect(Date.now() - at).to.be.lessThan(AT_ONCE_MS);
    expect(after.status).to.equal(401);
    expect(after.headers.get('www-authenticate')).to.match(/^Bearer realm="[^"]+", error="invalid_token"/);
    expect(((await after.json()) as { error: string }).error).to.equal('invalid_token');
    // Its refresh token went with the grant, at the process that did not revoke it too.
    const refreshed = await post(b, '/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client });
    expect(refreshed.status).to.equal(400);
    expect(((await refreshed.json()) as { error: string }).error).to.equal('invalid_grant');
  });

  it('an account disabled elsewhere stops its token at both userinfos and its key at both data APIs at once; enabled, both work', async () => {
    const user = { email: 'disabled.elsewhere@school.test', password: 'another long passphrase 77' };
    const accountId = await createAccount(db, user.email, user.password);
    const created = await createClient(db, { firstParty: true });
    const client = { client_id: created.client.id, client_secret: created.secret ?? '' };
    const atA = { url: a.url, request: (path: string, init?: RequestInit) => fetch(`${a.url}${path}`, init) } as unknown as TestApp;
    const { code, verifier } = await authorize(
      atA,
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', scope: 'self:read' },
      user,
    );
    const issued = await fetch(`${a.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier, ...client }),
    });
    expect(issued.status).to.equal(200);
    const token = ((await issued.json()) as { access_token: string }).access_token;
    const { key } = await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], ownerAccountId: accountId });
    const statuses = async () =>
      Promise.all(
        [a, b].flatMap((server) => [
          fetch(`${server.url}/userinfo`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.status),
          fetch(`${server.url}/v1/students?size=1`, { headers: { 'X-API-KEY': key } }).then((r) => r.status),
        ]),
      );
    // Both processes have read (and remember) the account, the grant and the key.
    expect(await statuses()).to.deep.equal([200, 200, 200, 200]);

    // This test process disables it, as `campus accounts disable` or another instance would.
    await new AccountService(db).setDisabled('CLI', user.email, true);
    const at = Date.now();
    expect(await statuses()).to.deep.equal([401, 401, 401, 401]);
    expect(Date.now() - at).to.be.lessThan(AT_ONCE_MS);

    await new AccountService(db).setDisabled('CLI', user.email, false);
    expect(await statuses()).to.deep.equal([200, 200, 200, 200]);
  });

  it('a TEACHER lowered to USER elsewhere: its STUDENT_READ key is refused at both processes at once, renewing does not restore it, the TEACHER role back does', async () => {
    const teacherId = await createAccount(db, 'lowered.teacher@school.test', 'a teacher pass phrase 5');
    await db.models.accounts.updateOne({ _id: teacherId }, { $set: { role: 'TEACHER' } });
    const keys = new ApiKeyService(db, TEST_POLICY);
    const standing = await findStanding(db, teacherId);
    if (!standing) throw new Error('no standing');
    // As the developer console asks: the TEACHER row grants STUDENT_READ at once.
    const { key, summary } = await keys.request(standing, { scopes: ['STUDENT_READ'], label: 'class roster' });
    const statuses = () =>
      Promise.all(
        [a, b].map((server) => fetch(`${server.url}/v1/students?size=1`, { headers: { 'X-API-KEY': key } }).then((r) => r.status)),
      );
    expect(await statuses()).to.deep.equal([200, 200]);

    // This test process lowers the role, as an admin at another instance would.
    await new AccountStore(db).updateRole(teacherId, 'TEACHER', 'USER');
    const at = Date.now();
    expect(await statuses()).to.deep.equal([403, 403]);
    expect(Date.now() - at).to.be.lessThan(AT_ONCE_MS);
    // Renewing re-reads the rule: the scope stays waiting for an admin, as a USER's would.
    const renewed = await keys.renew(summary.id);
    expect([renewed.scopes, renewed.pendingScopes]).to.deep.equal([[], ['STUDENT_READ']]);
    expect(await statuses()).to.deep.equal([403, 403]);
    // The TEACHER role back grants what that role grants now.
    await new AccountStore(db).updateRole(teacherId, 'USER', 'TEACHER');
    expect(await statuses()).to.deep.equal([200, 200]);
  });

  it('shares the Redis rate limit: a key’s budget is spent across both processes', async () => {
    const key = await issueKey(db, { rateLimit: { points: 4, durationSeconds: 600 } });
    const get = async (server: Served) => {
      const res = await fetch(`${server.url}/v1/students?size=1`, { headers: { 'X-API-KEY': key } });
      await res.arrayBuffer();
      return [res.status, res.headers.get('x-ratelimit-remaining')];
    };
    // Four points, two at each: each process alone would still have two left.
    expect([await get(a), await get(b), await get(a), await get(b)]).to.deep.equal([
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
    ]);
    expect((await get(a))[0]).to.equal(429);
    expect((await get(b))[0]).to.equal(429);
  });
});
