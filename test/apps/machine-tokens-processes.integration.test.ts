import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { runCampus, startCampus, type RunningCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { buildClub, buildStudent, insertSchool } from '../helpers/factories.js';

/**
 * Machine tokens across processes: two real `campus serve` on one database, without Redis (so
 * the slower path: each hears of a change made elsewhere through its version clock, re-read at
 * most once a second). A token the first issues is read at the second; disabling the app or
 * revoking its tokens with the `campus` command, or lowering its owner's role in the database,
 * is refused at the second within a second of the change.
 */

const OWNER = { email: 'processes.teacher@school.test', password: 'a teacher passphrase 42' };
/** The version clock's one second, and what a request and the polling add to it on a busy machine. */
const WITHIN_A_SECOND_MS = 1000 + 300;

interface Served {
  readonly url: string;
  readonly process: RunningCampus;
}

describe('OAuth apps: machine tokens stop in a second process within a second', function () {
  this.timeout(180000);
  let uri: string;
  let db: Database;
  let a: Served;
  let b: Served;
  let env: Record<string, string>;

  const campus = async (args: string[], stdin?: string) => {
    const result = await runCampus({ MONGODB_URI: uri }, args, stdin === undefined ? {} : { stdin });
    if (result.code !== 0) throw new Error(`campus ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    uri = testDatabaseUri('machine_tokens_processes');
    db = await openDatabase(uri);
    await insertSchool(db, {
      students: [buildStudent({ _id: 1, email: 'one@school.test', majorClubId: 10 })],
      clubs: [buildClub({ _id: 10, name: 'Robotics', type: 'MAJOR_CLUB' })],
    });
    const [portA, portB] = [await freePort(), await freePort()];
    const origin = `http://127.0.0.1:${portA}`;
    // One public origin for both, as behind one load balancer: a token of one names what the other expects.
    env = {
      MONGODB_URI: uri,
      HOST: '127.0.0.1',
      AUTH_URL: origin,
      USERINFO_URL: origin,
      BASE_URL: origin,
      NEIS_SYNC_ENABLED: 'false',
      // The polling below sends refused tokens in a loop: not a guesser to slow down.
      API_KEY_FAILURE_LIMIT: '10000/60',
    };
    a = await serve(portA);
    b = await serve(portB);
    await campus(['accounts', 'create', '--email', OWNER.email, '--password-stdin', '--role', 'TEACHER'], `${OWNER.password}\n`);
  });
  after(async () => {
    await a?.process.stop();
    await b?.process.stop();
    await db?.connection.dropDatabase().catch(() => {});
    await db?.close();
  });

  async function serve(port: number): Promise<Served> {
    const process = await startCampus({ ...env, PORT: String(port) }, ['serve', '--json']);
    return { url: (JSON.parse(process.firstLine) as { url: string }).url, process };
  }

  async function register(dataScopes: string, owner?: string): Promise<{ id: string; clientSecret: string }> {
    const args = ['clients', 'create', '--name', `Sync ${Math.random()}`, '--grant', 'client_credentials', '--data-scope', dataScopes];
    return JSON.parse(await campus([...args, ...(owner ? ['--owner', owner] : []), '--json'])) as { id: string; clientSecret: string };
  }

  /** A token from the first process. */
  async function tokenFromA(app: { id: string; clientSecret: string }): Promise<string> {
    const res = await fetch(`${a.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: app.id, client_secret: app.clientSecret }).toString(),
    });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  const atB = (path: string, token: string) => fetch(`${b.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  /** Milliseconds from now until the second process answers `path` with `status`. */
  async function untilB(path: string, token: string, status: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const res = await atB(path, token);
      await res.arrayBuffer();
      if (res.status === status) return Date.now() - started;
      if (Date.now() - started > 5000) throw new Error(`${path} still ${res.status} after 5 s`);
      await new Promise((done) => setTimeout(done, 20));
    }
  }

  it('disabling the app with the command: 401 at the second process within a second; enabling: read again', async () => {
    const app = await register('CLUB_READ');
    const token = await tokenFromA(app);
    expect((await atB('/v1/clubs', token)).status).to.equal(200);
    await campus(['clients', 'disable', app.id, '--json']);
    expect(await untilB('/v1/clubs', token, 401)).to.be.at.most(WITHIN_A_SECOND_MS);
    const refused = (await (await atB('/v1/clubs', token)).json()) as { message: string };
    expect(refused.message).to.equal("Disabled app: the app of this machine token is disabled; ask the school's administrators.");
    await campus(['clients', 'enable', app.id, '--json']);
    expect(await untilB('/v1/clubs', token, 200)).to.be.at.most(WITHIN_A_SECOND_MS);
  });

  it("revoking the app's tokens with the command: 401 at the second process within a second; a new token reads", async () => {
    const app = await register('CLUB_READ');
    const token = await tokenFromA(app);
    expect((await atB('/v1/clubs', token)).status).to.equal(200);
    const revoked = JSON.parse(await campus(['clients', 'tokens', 'revoke', app.id, '--json'])) as { tokensRevoked: boolean; id: string };
    expect(revoked).to.include({ tokensRevoked: true, id: app.id });
    expect(await untilB('/v1/clubs', token, 401)).to.be.at.most(WITHIN_A_SECOND_MS);
    expect((await atB('/v1/clubs', await tokenFromA(app))).status).to.equal(200);
  });

  it("lowering the owner's role: the scope it no longer grants is refused at the second process within a second", async () => {
    const app = await register('STUDENT_READ,CLUB_READ', OWNER.email);
    const token = await tokenFromA(app);
    expect((await atB('/v1/students', token)).status).to.equal(200);
    const owner = await new AccountStore(db).findByEmail(OWNER.email);
    expect(await new AccountStore(db).updateRole(owner?._id ?? 0, 'TEACHER', 'USER')).to.equal(true);
    expect(await untilB('/v1/students', token, 403)).to.be.at.most(WITHIN_A_SECOND_MS);
    expect((await atB('/v1/clubs', token)).status).to.equal(200);
  });
});
