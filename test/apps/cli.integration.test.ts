import { expect } from 'chai';
import { AccountService } from '../../src/oauth/accounts.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { authorize, postJson } from '../helpers/oauth.js';
import { runCampus } from '../helpers/cli.js';

/** Runs the real `campus` command against the given database. */
const campus = (uri: string, ...args: string[]) => runCampus({ MONGODB_URI: uri }, args);

interface ClientJson {
  id: string;
  name: string;
  type: string;
  firstParty: boolean;
  redirectUris: string[];
  scopes: string[];
  clientSecret?: string | null;
}

describe('OAuth apps: campus clients / accounts / seed --demo', function () {
  this.timeout(120000);
  let uri: string;
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase('oauth_cli');
    uri = db.uri;
  });
  after(() => db.drop());

  it('clients create | list | update | rotate-secret | delete', async () => {
    const created = await campus(
      uri,
      'clients',
      'create',
      '--name',
      'Club app',
      '--redirect-uri',
      'https://club.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:5000/cb',
      '--scope',
      'self:read',
      '--json',
    );
    expect(created.code, created.stderr).to.equal(0);
    const client = JSON.parse(created.stdout) as ClientJson;
    expect(client).to.include({ name: 'Club app', type: 'confidential', firstParty: false });
    expect(client.redirectUris).to.deep.equal(['https://club.example/cb', 'http://127.0.0.1:5000/cb']);
    expect(client.scopes).to.deep.equal(['self:read']);
    expect(client.clientSecret).to.match(/^[A-Za-z0-9_-]{43}$/);

    const human = await campus(uri, 'clients', 'list');
    expect(human.stdout).to.include(client.id);
    expect(human.stdout).to.not.include(client.clientSecret ?? '-');

    const updated = await campus(
      uri,
      'clients',
      'update',
      client.id,
      '--name',
      'Club app 2',
      '--first-party',
      '--scope',
      'self:read openid',
      '--json',
    );
    expect(JSON.parse(updated.stdout)).to.include({ name: 'Club app 2', firstParty: true });

    const rotated = await campus(uri, 'clients', 'rotate-secret', client.id, '--json');
    const newSecret = (JSON.parse(rotated.stdout) as ClientJson).clientSecret;
    expect(newSecret).to.be.a('string').and.not.equal(client.clientSecret);

    const bad = await campus(uri, 'clients', 'create', '--name', 'x', '--redirect-uri', 'not a url');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('must be an absolute http(s) URL');

    const deleted = await campus(uri, 'clients', 'delete', client.id);
    expect(deleted.code, deleted.stderr).to.equal(0);
    const list = JSON.parse((await campus(uri, 'clients', 'list', '--json')).stdout) as ClientJson[];
    expect(list.map((c) => c.id)).to.not.include(client.id);
  });

  it('clients create | update with --pkce and --post-logout-redirect-uri', async () => {
    const created = await campus(
      uri,
      'clients',
      'create',
      '--name',
      'Legacy app',
      '--redirect-uri',
      'https://legacy.example/cb',
      '--pkce',
      'optional',
      '--post-logout-redirect-uri',
      'https://legacy.example/bye',
      '--json',
    );
    expect(created.code, created.stderr).to.equal(0);
    const client = JSON.parse(created.stdout) as ClientJson & { pkce: string; postLogoutRedirectUris: string[] };
    expect(client).to.include({ type: 'confidential', pkce: 'optional' });
    expect(client.postLogoutRedirectUris).to.deep.equal(['https://legacy.example/bye']);
    expect((await campus(uri, 'clients', 'list')).stdout).to.include(`${client.id} "Legacy app" active (confidential, PKCE optional)`);

    const updated = await campus(
      uri,
      'clients',
      'update',
      client.id,
      '--pkce',
      'required',
      '--post-logout-redirect-uri',
      'https://legacy.example/a',
      '--post-logout-redirect-uri',
      'https://legacy.example/b',
      '--json',
    );
    expect(JSON.parse(updated.stdout)).to.deep.include({
      pkce: 'required',
      postLogoutRedirectUris: ['https://legacy.example/a', 'https://legacy.example/b'],
    });

    // PKCE is required by default, and always for public clients.
    const byDefault = JSON.parse(
      (await campus(uri, 'clients', 'create', '--name', 'New app', '--redirect-uri', 'https://new.example/cb', '--json')).stdout,
    ) as { pkce: string };
    expect(byDefault.pkce).to.equal('required');
    const publicOptional = await campus(
      uri,
      'clients',
      'create',
      '--name',
      'x',
      '--redirect-uri',
      'https://x.example/cb',
      '--public',
      '--pkce',
      'optional',
    );
    expect(publicOptional.code).to.equal(1);
    expect(publicOptional.stderr).to.equal(
      'campus: A public client always requires PKCE: --pkce optional is only for confidential clients.\n',
    );
    const unknown = await campus(uri, 'clients', 'create', '--name', 'x', '--redirect-uri', 'https://x.example/cb', '--pkce', 'sometimes');
    expect(unknown.stderr).to.equal('campus: --pkce must be one of required, optional.\n');
    const badLogout = await campus(uri, 'clients', 'update', client.id, '--post-logout-redirect-uri', 'https://x.example/bye#frag');
    expect(badLogout.stderr).to.equal('campus: Post-logout redirect URI https://x.example/bye#frag must not have a fragment.\n');
    const help = await campus(uri, 'clients', 'update', '--help');
    expect(help.stdout).to.include('--pkce <policy>');
    expect(help.stdout).to.include('--post-logout-redirect-uri <uri>');
  });

  it('accounts create | list | delete, with --help on each', async () => {
    const created = await campus(
      uri,
      'accounts',
      'create',
      '--email',
      'Admin@School.Test',
      '--password',
      'a staff pass phrase',
      '--role',
      'ADMIN',
      '--json',
    );
    expect(created.code, created.stderr).to.equal(0);
    // --password keeps working for existing scripts, with a warning.
    expect(created.stderr).to.include('Warning: --password puts the password on the command line');
    expect(JSON.parse(created.stdout)).to.include({ email: 'admin@school.test', role: 'ADMIN', isStudent: false });
    const dup = await campus(uri, 'accounts', 'create', '--email', 'admin@school.test', '--password', 'a staff pass phrase');
    expect(dup.code).to.equal(1);
    expect(dup.stderr).to.include('already exists');
    const list = await campus(uri, 'accounts', 'list');
    expect(list.stdout).to.include('admin@school.test ADMIN');
    expect(list.stdout).to.not.include('argon2');
    expect((await campus(uri, 'accounts', 'delete', 'admin@school.test')).code).to.equal(0);
    const help = await campus(uri, 'clients', 'create', '--help');
    expect(help.stdout).to.include('--redirect-uri <uri>');
  });

  it('accounts create --password-stdin keeps the password off the command line', async () => {
    const created = await runCampus(
      { MONGODB_URI: uri },
      ['accounts', 'create', '--email', 'stdin@school.test', '--password-stdin', '--json'],
      {
        stdin: 'a pass phrase on standard input\n',
      },
    );
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.equal('');
    const accounts = new AccountService(db);
    expect((await accounts.verifyLogin('stdin@school.test', 'a pass phrase on standard input'))?.email).to.equal('stdin@school.test');
    expect(await accounts.verifyLogin('stdin@school.test', 'a pass phrase on standard input\n')).to.equal(null);
    // The breached-password rule of sign-up holds here too.
    const common = await runCampus({ MONGODB_URI: uri }, ['accounts', 'create', '--email', 'weak@school.test', '--password-stdin'], {
      stdin: 'password123\n',
    });
    expect(common.code).to.equal(1);
    expect(common.stderr).to.equal('campus: the password is among the most common (breached) passwords; choose another.\n');
    const neither = await campus(uri, 'accounts', 'create', '--email', 'none@school.test');
    expect(neither.stderr).to.equal('campus: A password is required: --password-stdin (recommended) or --password.\n');
  });

  it('accounts mfa enroll --json prints the otpauth:// URI and the recovery codes; mfa reset removes the factor', async () => {
    const enrolled = await campus(uri, 'accounts', 'mfa', 'enroll', 'stdin@school.test', '--json');
    expect(enrolled.code, enrolled.stderr).to.equal(0);
    const out = JSON.parse(enrolled.stdout) as { email: string; secret: string; uri: string; recoveryCodes: string[] };
    expect(out.email).to.equal('stdin@school.test');
    expect(out.uri).to.equal(
      `otpauth://totp/Campus%20Data%20Service:stdin%40school.test?secret=${out.secret}&issuer=Campus%20Data%20Service`,
    );
    expect(out.recoveryCodes).to.have.length(10);
    for (const code of out.recoveryCodes) expect(code).to.match(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const accountId = (await db.models.accounts.findOne({ email: 'stdin@school.test' }).lean())?._id;
    const stored = await db.models.accountMfa.findOne({ _id: accountId }).lean();
    expect(stored).to.deep.include({ active: true });
    expect(stored?.secret).not.to.include(out.secret);
    expect(JSON.stringify(stored)).not.to.include(out.recoveryCodes[0]?.replace('-', ''));
    const reset = await campus(uri, 'accounts', 'mfa', 'reset', 'stdin@school.test', '--json');
    expect(JSON.parse(reset.stdout)).to.deep.equal({ email: 'stdin@school.test', removed: true });
    expect(await db.models.accountMfa.countDocuments({ _id: accountId })).to.equal(0);
    expect((await campus(uri, 'accounts', 'mfa', 'reset', 'stdin@school.test')).stdout).to.equal(
      'stdin@school.test had no second factor.\n',
    );
    const unknown = await campus(uri, 'accounts', 'mfa', 'enroll', 'nobody@school.test');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal('campus: No account has the email nobody@school.test.\n');
    expect((await campus(uri, 'accounts', 'mfa', 'enroll', '--help')).stdout).to.include('otpauth:// URI');
  });

  it('seed --demo creates the demo account and clients, idempotently, and they work as the README says', async () => {
    const first = await campus(uri, 'seed', '--demo');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.include(`client_secret ${DEMO_OAUTH.clientSecret}`);
    const snapshot = async () => ({
      accounts: (await db.models.accounts.find().lean()).map(({ _id, email, role, passwordHash }) => ({ _id, email, role, passwordHash })),
      clients: await db.models.oauthClients.find().sort({ _id: 1 }).lean(),
    });
    const before = await snapshot();
    expect((await campus(uri, 'seed', '--demo')).code).to.equal(0);
    expect(await snapshot()).to.deep.equal(before);

    const email = /email (\S+), password/.exec(first.stdout)?.[1] ?? '';
    const t: TestApp = await buildTestApp('oauth_cli_demo', { db });
    try {
      // The demo confidential client requires PKCE, like every client by default.
      const { code, verifier } = await authorize(
        t,
        { client_id: DEMO_OAUTH.clientId, redirect_uri: DEMO_OAUTH.redirectUri, response_type: 'code', state: 'demo' },
        { email, password: DEMO_OAUTH.password },
      );
      const res = await postJson(t, '/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: DEMO_OAUTH.clientId,
        redirect_uri: DEMO_OAUTH.redirectUri,
        client_secret: DEMO_OAUTH.clientSecret,
        code_verifier: verifier,
      });
      expect(res.status).to.equal(200);
    } finally {
      await t.close();
    }
  });
});
