import { expect } from 'chai';
import { AppService, AppValidationError } from '../../src/oauth/apps.js';
import { LogoutNotices } from '../../src/oauth/backchannel-logout.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { createAccount, signInToConsole, type ConsoleSession } from '../helpers/oauth.js';

/**
 * How an app's people sign in beyond the browser, as its owner sets it in the developer console
 * and an operator with `campus apps`: the device grant (an app that signs in only by device needs
 * no redirect address) and the back-channel logout address (its rules, and the logout tokens sent
 * there, listed for the owner).
 */

const OWNER = { email: 'maker@school.test', password: 'maker of apps 1' };

describe('OAuth apps: device sign-in and back-channel logout in the app form and campus apps', function () {
  this.timeout(120_000);
  let t: TestApp;
  let owner: ConsoleSession;

  before(async () => {
    t = await buildTestApp('app_sign_in_options');
    await createAccount(t.db, OWNER.email, OWNER.password);
    owner = await signInToConsole(t, OWNER);
  });
  after(() => t.close());

  it('the console registers a device-only app with a back-channel logout address; its page shows both and the tokens sent', async () => {
    const created = await owner.post('/console/apps', {
      name: 'Cafeteria screen',
      serviceName: '',
      redirectUris: '',
      type: 'public',
      scopes: ['openid', 'profile'],
      grants: ['device'],
      backchannelLogoutUri: 'https://screen.example/logout',
    });
    expect(created.res.status).to.equal(303);
    const id = /\/console\/apps\/([0-9a-f-]{36})/.exec(created.res.headers.get('location') ?? '')?.[1] ?? '';
    const app = await new AppService(t.db, { isProduction: false }).get(id);
    expect(app).to.include({ backchannelLogoutUri: 'https://screen.example/logout', type: 'public' });
    expect(app.grants).to.deep.equal(['device']);
    expect(app.redirectUris).to.deep.equal([]);

    const page = await owner.get(`/console/apps/${id}`);
    expect(page.html).to.match(/<input\s+id="f-grants-2"\s+type="checkbox"\s+name="grants"\s+value="device"\s+checked/);
    expect(page.html).to.match(/<input\s+id="f-grants-0"\s+type="checkbox"\s+name="grants"\s+value="authorization_code"\s+\/>/);
    expect(page.html).to.include('value="https://screen.example/logout"');
    expect(page.html).to.include('<h2 id="logouts">백채널 로그아웃</h2>');
    expect(page.html).to.include('아직 보낸 로그아웃 토큰이 없습니다.');

    // A person's sign-in to it ends: the notice is listed for the owner, with why and for whom.
    await new LogoutNotices(t.db).tell([{ clientId: id, sub: '42', sid: 'sid-of-a-sign-in' }], 'session_ended');
    const listed = await owner.get(`/console/apps/${id}`);
    expect(listed.html).to.include('로그인 끝내기');
    expect(listed.html).to.include('<code>sid-of-a-sign-in</code>');
    expect(listed.html).to.include('보낼 예정');
  });

  it('the form refuses a back-channel address that is not a whole http(s) address, at its field (422)', async () => {
    const refused = await owner.post('/console/apps', {
      name: 'Bad logout address',
      serviceName: '',
      redirectUris: 'https://app.example/cb',
      type: 'confidential',
      scopes: ['openid'],
      backchannelLogoutUri: 'ftp://app.example/logout',
    });
    expect(refused.res.status).to.equal(422);
    expect(refused.html).to.include('<a href="#f-backchannelLogoutUri">ftp://app.example/logout: http(s)로 시작하고');
  });

  it('the rules: no redirect address only with the device grant; unknown grants, fragments and plain http in production refused', async () => {
    const apps = new AppService(t.db, { isProduction: false });
    const problem = (fn: () => Promise<unknown>) =>
      fn().then(
        () => 'accepted',
        (err: unknown) => (err instanceof AppValidationError ? err.problem : String(err)),
      );
    expect(await problem(() => apps.create({ name: 'No way in', redirectUris: [] }))).to.equal('redirect_uri_missing');
    expect(
      await problem(() => apps.create({ name: 'Odd', redirectUris: ['https://a.example/cb'], grants: ['implicit'] as never })),
    ).to.equal('grants');
    expect(
      await problem(() =>
        apps.create({ name: 'Frag', redirectUris: ['https://a.example/cb'], backchannelLogoutUri: 'https://a.example/l#x' }),
      ),
    ).to.equal('backchannel_logout_uri');
    const production = new AppService(t.db, { isProduction: true });
    expect(
      await problem(() =>
        production.create({ name: 'Plain', redirectUris: ['https://a.example/cb'], backchannelLogoutUri: 'http://a.example/l' }),
      ),
    ).to.equal('backchannel_logout_uri');
    // The provider sees a device-only app as such: no code flow, the device grant, refresh.
    const device = await apps.create({ name: 'TV', redirectUris: [], grants: ['device'], public: true });
    const metadata = await apps.metadata(device.client.id);
    expect(metadata).to.include({ token_endpoint_auth_method: 'none' });
    expect(metadata?.grant_types).to.deep.equal(['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token']);
    expect(metadata?.response_types).to.deep.equal([]);
  });

  it('campus apps create --grant device --backchannel-logout-uri, update --grant, logouts, each with --json and --help', async () => {
    const env = { MONGODB_URI: testDatabaseUri('app_sign_in_options') };
    const create = await runCampus(env, [
      'apps',
      'create',
      '--name',
      'CLI screen',
      '--public',
      '--grant',
      'device',
      '--backchannel-logout-uri',
      'https://screen.example/bcl',
      '--json',
    ]);
    expect(create.code, create.stderr).to.equal(0);
    const app = JSON.parse(create.stdout) as { id: string; grants: string[]; backchannelLogoutUri: string; redirectUris: string[] };
    expect([app.grants, app.backchannelLogoutUri, app.redirectUris]).to.deep.equal([['device'], 'https://screen.example/bcl', []]);

    const unknown = await runCampus(env, ['apps', 'create', '--name', 'x', '--grant', 'password']);
    expect([unknown.code, unknown.stderr.trim()]).to.deep.equal([
      1,
      'campus: --grant must be one of authorization_code, client_credentials, device (got password).',
    ]);

    // Signing in with a browser too needs a redirect address: refused without one, with what to do.
    const stranded = await runCampus(env, ['apps', 'update', app.id, '--grant', 'authorization_code']);
    expect(stranded.code).to.equal(1);
    expect(stranded.stderr).to.include('At least one --redirect-uri is required');
    const both = await runCampus(env, [
      'apps',
      'update',
      app.id,
      '--redirect-uri',
      'http://127.0.0.1:7/cb',
      '--grant',
      'authorization_code',
      '--grant',
      'device',
      '--backchannel-logout-uri',
      '',
      '--json',
    ]);
    expect(both.code, both.stderr).to.equal(0);
    expect(JSON.parse(both.stdout))
      .to.include({ backchannelLogoutUri: null })
      .and.have.property('grants')
      .that.deep.equals(['authorization_code', 'device']);

    const logouts = await runCampus(env, ['apps', 'logouts', app.id, '--json']);
    expect([logouts.code, JSON.parse(logouts.stdout)]).to.deep.equal([0, []]);
    const none = await runCampus(env, ['apps', 'logouts', 'no-such-app']);
    expect([none.code, none.stderr.trim()]).to.deep.equal([1, 'campus: No client with id no-such-app.']);
    const help = await runCampus(env, ['apps', 'logouts', '--help']);
    expect(help.stdout).to.include('back-channel logout tokens');
  });
});
