import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { DEMO_API_KEY } from '../../src/data/school/demo.js';
import { clientCredentials, createClient } from '../../clients/typescript/src/index.js';
import { eventually } from '../helpers/receiver.js';
import { registerMachineApp, serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * The typed client's machine tokens (clients/typescript, `clientCredentials`) against a real
 * `campus serve` on the demo school: a token of the app's scopes, kept while it is valid and
 * renewed before it expires (the clock moved, not waited for), one request for callers at once,
 * and the data API called with it reading what the demo key reads; a revoked token is replaced.
 */
describe('developer kit: clientCredentials of clients/typescript against campus serve', function () {
  this.timeout(120000);
  let served: ServedDemo;
  let app: { id: string; clientSecret: string };

  before(async () => {
    served = await serveDemo('client_credentials');
    app = await registerMachineApp(served, 'Sync', 'CLUB_READ,NEIS_READ');
  });
  after(async () => {
    await served?.stop();
  });

  it('keeps a token while it is valid and renews it before it expires; callers at once share one request', async () => {
    let clock = Date.now();
    const machine = clientCredentials({
      issuer: served.url,
      clientId: app.id,
      clientSecret: app.clientSecret,
      scope: 'CLUB_READ',
      now: () => clock,
    });
    const first = await machine.token();
    const claims = decodeJwt(first);
    expect(claims).to.include({ client_id: app.id, scope: 'CLUB_READ', aud: `${served.url}/` });
    expect(await machine.token()).to.equal(first);
    // 61 s before it expires: still the same (the default margin is 60 s).
    clock += (3600 - 61) * 1000;
    expect(await machine.token()).to.equal(first);
    // Inside the margin: a new token, asked for once by callers at the same moment.
    clock += 2000;
    const [a, b, c] = await Promise.all([machine.token(), machine.token(), machine.token()]);
    expect(a).to.not.equal(first);
    expect([b, c]).to.deep.equal([a, a]);
    expect(decodeJwt(a ?? '').jti).to.not.equal(claims.jti);
    // Every scope the app may hold when none is named.
    const all = clientCredentials({ issuer: served.url, clientId: app.id, clientSecret: app.clientSecret });
    expect(decodeJwt(await all.token())['scope']).to.equal('CLUB_READ NEIS_READ');
  });

  it('createClient with machine tokens reads what the demo key reads, and replaces a revoked token once', async () => {
    const machine = clientCredentials({ issuer: served.url, clientId: app.id, clientSecret: app.clientSecret });
    const campus = createClient({ baseUrl: served.url, tokens: machine });
    const byKey = createClient({ baseUrl: served.url, apiKey: DEMO_API_KEY });
    const clubs = await campus.GET('/v1/clubs', { params: { query: { size: 3 } } });
    const keyed = await byKey.GET('/v1/clubs', { params: { query: { size: 3 } } });
    expect(clubs.response.status).to.equal(200);
    expect(clubs.response.headers.get('etag')).to.equal(keyed.response.headers.get('etag'));
    expect(clubs.data).to.deep.equal(keyed.data);
    // Not its scope: the envelope says which.
    const students = await campus.GET('/v1/students');
    expect(students.response.status).to.equal(403);
    expect(students.error?.message).to.equal('This app lacks the STUDENT_READ scope that this endpoint requires.');

    const before = await machine.token();
    await served.campus(['clients', 'tokens', 'revoke', app.id, '--json']);
    // The command is another process: the server hears of it within a second (its version clock).
    const refused = () => fetch(`${served.url}/v1/clubs`, { headers: { authorization: `Bearer ${before}` } });
    await eventually(async () => (await refused()).status === 401, 2000, 'the revoked token refused');
    const again = await campus.GET('/v1/clubs', { params: { query: { size: 3 } } });
    expect(again.response.status).to.equal(200);
    expect(await machine.token()).to.not.equal(before);
    expect(() => createClient({ baseUrl: served.url, apiKey: DEMO_API_KEY, tokens: machine })).to.throw(TypeError, /not both/);
  });
});
