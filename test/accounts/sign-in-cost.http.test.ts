import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildStudent, insertSchool } from '../helpers/factories.js';
import { authorize, createAccount, createClient, postJson, REDIRECT_URI } from '../helpers/oauth.js';

/**
 * What one sign-in costs the database, counted by the data layer's telemetry (every operation
 * made through a model, src/data/platform/telemetry.ts): authorize, the login page, the password, the
 * code at the redirect, the token exchange and one userinfo call. docs/benchmarks.md says what
 * each of these reads and writes, and why; a change that adds one fails here.
 */

/** The database operations of a warm sign-in (docs/benchmarks.md, "What a sign-in reads and writes"). */
const WARM_SIGN_IN_OPERATIONS = 12;

describe('accounts and sign-in: what a sign-in costs the database', function () {
  this.timeout(60000);
  let t: TestApp;
  let client: { id: string; secret: string };
  const user = { email: 'counted@school.test', password: 'a counted pass phrase' };
  const operations: string[] = [];

  before(async () => {
    t = await buildTestApp('sign_in_cost');
    await insertSchool(t.db, { students: [buildStudent({ _id: 1, email: user.email })] });
    await createAccount(t.db, user.email, user.password);
    const created = await createClient(t.db, { firstParty: true });
    client = { id: created.client.id, secret: created.secret ?? '' };
    t.db.telemetry.onOperation((sample) => operations.push(`${sample.collection} ${sample.operation}`));
  });
  after(() => t.close());

  async function signIn(): Promise<void> {
    const result = await authorize(t, { client_id: client.id, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's' }, user);
    expect(result.code).to.be.a('string');
    const token = await postJson(t, '/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: result.code,
      client_id: client.id,
      client_secret: client.secret,
      redirect_uri: REDIRECT_URI,
      code_verifier: result.verifier,
    });
    expect(token.status).to.equal(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const info = await t.request('/userinfo', { headers: { authorization: `Bearer ${access_token}` } });
    expect(info.status).to.equal(200);
    await info.arrayBuffer();
  }

  it(`a warm sign-in (authorize to userinfo) makes at most ${WARM_SIGN_IN_OPERATIONS} database operations`, async () => {
    await signIn();
    await signIn();
    operations.length = 0;
    await signIn();
    const counted = [...operations];
    // The version clock's own read (once a second at most) is no part of a sign-in.
    const ofSignIn = counted.filter((op) => op !== 'meta findOne');
    expect(ofSignIn.length, ofSignIn.sort().join(', ')).to.be.at.most(WARM_SIGN_IN_OPERATIONS);
    // No account, second factor or client is read: they are remembered.
    expect(ofSignIn.filter((op) => /^(accounts|account_mfa|oauth_clients|student_update_requests) /.test(op))).to.deep.equal([]);
  });
});
