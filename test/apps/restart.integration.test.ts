import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { startCampus, type RunningCampus } from '../helpers/cli.js';
import { authorize, createAccount, createClient, REDIRECT_URI } from '../helpers/oauth.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';

/**
 * "A restart loses no grant or token", for real: `campus serve` with its own embedded
 * database (FerretDB over SQLite with SQLITE_SYNCHRONOUS=normal, the default; over PostgreSQL in
 * the suite's second pass), both killed with SIGKILL between requests, then started again on the
 * same files. Every grant, refresh token and claim written before the kill is still there: the
 * person stays signed in, and a used refresh token is still spent.
 */

const USER = { email: 'restart@school.test', password: 'a long enough passphrase 42' };

interface Served {
  readonly url: string;
  readonly process: RunningCampus;
}

describe('OAuth apps: a restart of the service and its database (both killed) loses no grant or token', function () {
  this.timeout(120000);
  const dataDir = join('.data', `restart-${process.pid}`);
  let port: number;
  let served: Served | undefined;

  const env = () => ({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    NEIS_SYNC_ENABLED: 'false',
    // Over PostgreSQL in the suite's second pass (.ci/run), as the suite's own database is.
    ...(process.env['TEST_POSTGRES_URL'] ? { FERRETDB_POSTGRESQL_URL: process.env['TEST_POSTGRES_URL'] } : {}),
  });

  before(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    port = await freePort();
  });
  after(async () => {
    // Its data goes while the database still runs (over PostgreSQL it would outlive DATA_DIR).
    const db = served ? await openDatabase(embeddedUri()).catch(() => undefined) : undefined;
    await db?.connection.dropDatabase();
    await db?.close();
    await served?.process.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function serve(): Promise<Served> {
    const process = await startCampus(env(), ['serve', '--json']);
    return { url: (JSON.parse(process.firstLine) as { url: string }).url, process };
  }

  /** The embedded database `campus serve` started (its state file in DATA_DIR). */
  function embeddedState(): { pid: number; uri: string } {
    return JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8')) as { pid: number; uri: string };
  }
  function embeddedUri(): string {
    return embeddedState().uri;
  }
  it('a grant, its refresh tokens and their claims survive; the person stays signed in', async () => {
    served = await serve();
    let db: Database = await openDatabase(embeddedUri());
    let client: { client_id: string; client_secret: string };
    try {
      await createAccount(db, USER.email, USER.password);
      const created = await createClient(db, { name: 'Restart app' });
      client = { client_id: created.client.id, client_secret: created.secret ?? '' };
    } finally {
      await db.close();
    }
    const at = (s: Served) => ({ url: s.url, request: (path: string, init?: RequestInit) => fetch(`${s.url}${path}`, init) }) as TestApp;
    const token = (s: Served, body: Record<string, string>) =>
      fetch(`${s.url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, ...client }),
      });
    const { code, verifier } = await authorize(
      at(served),
      { client_id: client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's', scope: 'self:read' },
      USER,
    );
    const issued = await token(served, {
      grant_type: 'authorization_code',
      code: code ?? '',
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier ?? '',
    });
    expect(issued.status, await issued.clone().text()).to.equal(200);
    const first = (await issued.json()) as { access_token: string; refresh_token: string };
    const rotated = await token(served, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(rotated.status, await rotated.clone().text()).to.equal(200);
    const second = (await rotated.json()) as { access_token: string; refresh_token: string };

    // The database first (a service killed alone would take its database down with it, gently).
    const databasePid = embeddedState().pid;
    process.kill(databasePid, 'SIGKILL');
    served.process.child.kill('SIGKILL');
    await new Promise<void>((done) => served?.process.child.once('exit', () => done()));
    served = await serve();
    expect(embeddedState().pid).to.not.equal(databasePid);

    // The access token of before still reads userinfo: its grant and the signing key survived.
    const userinfo = await fetch(`${served.url}/userinfo`, { headers: { Authorization: `Bearer ${second.access_token}` } });
    expect(userinfo.status, await userinfo.clone().text()).to.equal(200);
    expect(((await userinfo.json()) as { email: string }).email).to.equal(USER.email);
    // The current refresh token refreshes, as if nothing had happened...
    const third = await token(served, { grant_type: 'refresh_token', refresh_token: second.refresh_token });
    expect(third.status, await third.clone().text()).to.equal(200);
    const current = (await third.json()) as { refresh_token: string };
    // ...and the one used before the kill is still spent: its claim survived, so using it now
    // (its successor in use) is reuse, which revokes the grant.
    const reused = await token(served, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reused.status).to.equal(400);
    expect(await reused.json()).to.deep.include({ error: 'invalid_grant', error_description: 'refresh token already used' });
    const revoked = await token(served, { grant_type: 'refresh_token', refresh_token: current.refresh_token });
    expect(revoked.status).to.equal(400);

    db = await openDatabase(embeddedUri());
    try {
      expect(await db.models.oauthRecords.countDocuments({ kind: 'Grant' })).to.equal(0);
    } finally {
      await db.close();
    }
  });
});
