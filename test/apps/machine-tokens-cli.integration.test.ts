import { expect } from 'chai';
import { AccountStore } from '../../src/data/accounts/store.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { hashPassword } from '../../src/oauth/secrets.js';
import { runCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';

/**
 * The commands of machine tokens, as the console's actions (docs/cli.md): `campus apps create
 * --grant client_credentials --data-scope ...` (the `clients` alias too), an account's app under
 * its owner's key policy (`--owner`, `--purpose`), `approve` / `refuse` of the data scopes it
 * waits for, `tokens revoke`, and the refusals, each a one-line error and exit 1.
 */

const campus = (uri: string, ...args: string[]) => runCampus({ MONGODB_URI: uri }, args);

interface AppJson {
  id: string;
  grants: string[];
  dataScopes: string[];
  approvedDataScopes: string[];
  refusedDataScopes: string[];
  dataPurpose: string | null;
  redirectUris: string[];
  scopes: string[];
  clientSecret?: string | null;
  dataScopeStates?: Record<string, string>;
}

describe('OAuth apps: campus apps for machine tokens', function () {
  this.timeout(120000);
  let uri: string;
  let db: Database;

  before(async () => {
    uri = testDatabaseUri('machine_tokens_cli');
    db = await openDatabase(uri);
    await db.ensureIndexes();
    await new AccountStore(db).create({
      email: 'student@school.test',
      passwordHash: await hashPassword('student passphrase'),
      role: 'USER',
    });
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });

  const json = async <T>(...args: string[]): Promise<T> => {
    const result = await campus(uri, ...args);
    expect(result.code, `campus ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return JSON.parse(result.stdout) as T;
  };
  const refused = async (message: string, ...args: string[]) => {
    const result = await campus(uri, ...args);
    expect(result.code, result.stdout).to.equal(1);
    expect(result.stderr).to.include(message);
  };

  it('apps create --grant client_credentials: no redirect address needed; the secret once; list shows each scope', async () => {
    const app = await json<AppJson>(
      'apps',
      'create',
      '--name',
      'Nightly sync',
      '--grant',
      'client_credentials',
      '--data-scope',
      'club_read,NEIS_READ',
      '--json',
    );
    expect(app).to.deep.include({ grants: ['client_credentials'], dataScopes: ['CLUB_READ', 'NEIS_READ'], redirectUris: [], scopes: [] });
    expect(app.clientSecret).to.match(/^[A-Za-z0-9_-]{43}$/);
    const listed = (await json<AppJson[]>('clients', 'list', '--json')).find((a) => a.id === app.id);
    expect(listed?.dataScopeStates).to.deep.equal({ CLUB_READ: 'approved', NEIS_READ: 'approved' });
    expect(listed).to.not.have.property('clientSecret');
    const human = await campus(uri, 'clients', 'list');
    expect(human.stdout).to.include(`grants=client_credentials scopes= data-scopes=CLUB_READ,NEIS_READ`);
    // Both grants: a person signs in, and the server gets machine tokens.
    const both = await json<AppJson>(
      'clients',
      'create',
      '--name',
      'Both',
      '--redirect-uri',
      'https://both.example/cb',
      '--grant',
      'authorization_code',
      '--grant',
      'client_credentials',
      '--data-scope',
      'CLUB_READ',
      '--json',
    );
    expect(both.grants).to.deep.equal(['authorization_code', 'client_credentials']);
    expect(both.scopes).to.deep.equal(['self:read', 'openid', 'profile', 'email']);
  });

  it('refuses what cannot be: an unknown grant or scope, a public machine app, data scopes without the grant, none with it', async () => {
    await refused('--grant must be one of authorization_code, client_credentials', 'apps', 'create', '--name', 'X', '--grant', 'password');
    await refused('Unknown scope WRITE_ALL', 'apps', 'create', '--name', 'X', '--grant', 'client_credentials', '--data-scope', 'WRITE_ALL');
    await refused(
      'client_credentials is only for confidential apps',
      ...['apps', 'create', '--name', 'X', '--public', '--redirect-uri', 'http://127.0.0.1:5000/cb', '--grant', 'client_credentials'],
      ...['--data-scope', 'CLUB_READ'],
    );
    await refused(
      'register the app with the client_credentials grant',
      ...['apps', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb', '--data-scope', 'CLUB_READ'],
    );
    await refused('Machine tokens need at least one data scope', 'apps', 'create', '--name', 'X', '--grant', 'client_credentials');
    await refused('At least one --redirect-uri is required', 'apps', 'create', '--name', 'X', '--grant', 'authorization_code');
    // A machine app that comes to sign people in needs a redirect address too.
    const machine = await json<AppJson>(
      'apps',
      'create',
      '--name',
      'M',
      '--grant',
      'client_credentials',
      '--data-scope',
      'CLUB_READ',
      '--json',
    );
    await refused('At least one --redirect-uri is required', 'apps', 'update', machine.id, '--grant', 'authorization_code');
    const signing = await json<AppJson>(
      ...['apps', 'update', machine.id, '--grant', 'authorization_code', '--redirect-uri', 'https://m.example/cb', '--json'],
    );
    // The default login scopes; no data scope left without the grant.
    expect(signing).to.deep.include({
      grants: ['authorization_code'],
      scopes: ['self:read', 'openid', 'profile', 'email'],
      dataScopes: [],
    });
  });

  it("--owner: the owner's key policy, a purpose for what awaits approval, then approve and refuse (in the access log)", async () => {
    const args = ['apps', 'create', '--owner', 'student@school.test', '--name', 'Roll call', '--grant', 'client_credentials'];
    await refused(
      "STUDENT_READ needs an administrator's approval: write what you need the data for",
      ...args,
      '--data-scope',
      'STUDENT_READ',
    );
    const app = await json<AppJson>(
      ...args,
      '--data-scope',
      'CLUB_READ,STUDENT_READ',
      '--purpose',
      'the roll shows student numbers',
      '--json',
    );
    expect(app).to.deep.include({ dataScopes: ['CLUB_READ', 'STUDENT_READ'], dataPurpose: 'the roll shows student numbers' });
    const states = async () => (await json<AppJson[]>('apps', 'list', '--json')).find((a) => a.id === app.id)?.dataScopeStates;
    expect(await states()).to.deep.equal({ CLUB_READ: 'approved', STUDENT_READ: 'pending' });
    const approved = await json<AppJson>('apps', 'approve', app.id, '--json');
    expect(approved.approvedDataScopes).to.deep.equal(['STUDENT_READ']);
    expect(await states()).to.deep.equal({ CLUB_READ: 'approved', STUDENT_READ: 'approved' });
    await refused('has no data scope awaiting approval', 'apps', 'refuse', app.id);

    // Another app asks for a scope, and an admin refuses it: it stays refused.
    const other = await json<AppJson>(...args, '--data-scope', 'STUDENT_READ', '--purpose', 'roll', '--json');
    const decided = await json<AppJson & { refused: string[] }>('apps', 'refuse', other.id, '--json');
    expect(decided.refused).to.deep.equal(['STUDENT_READ']);
    expect((await json<AppJson[]>('apps', 'list', '--json')).find((a) => a.id === other.id)?.dataScopeStates).to.deep.equal({
      STUDENT_READ: 'refused',
    });
    const log = await db.models.accessAudit.find({ targetId: { $in: [app.id, other.id] } }).lean<{ action: string }[]>();
    // Approving the app approves it (as any account's app) and what its machine tokens waited for.
    expect(log.map((entry) => entry.action).sort()).to.deep.equal(['APP_APPROVED', 'APP_DATA_SCOPES_APPROVED', 'APP_DATA_SCOPES_REFUSED']);
  });

  it('update gives an app the grant (and its machine grant); tokens revoke replaces that grant; both say so in --json', async () => {
    const app = await json<AppJson>('clients', 'create', '--name', 'Later', '--redirect-uri', 'https://later.example/cb', '--json');
    await refused('has no machine tokens', 'clients', 'tokens', 'revoke', app.id);
    const updated = await json<AppJson>(
      ...[
        'clients',
        'update',
        app.id,
        '--grant',
        'authorization_code',
        '--grant',
        'client_credentials',
        '--data-scope',
        'NEIS_READ',
        '--json',
      ],
    );
    expect(updated).to.deep.include({ grants: ['authorization_code', 'client_credentials'], dataScopes: ['NEIS_READ'] });
    const grant = async () => (await db.models.oauthClients.findById(app.id).lean<{ machineGrantId: string | null }>())?.machineGrantId;
    const first = await grant();
    expect(first).to.be.a('string');
    const revoked = await json<AppJson & { tokensRevoked: boolean }>('clients', 'tokens', 'revoke', app.id, '--json');
    expect(revoked).to.include({ id: app.id, tokensRevoked: true });
    expect(await grant())
      .to.be.a('string')
      .and.not.equal(first);
    const human = await campus(uri, 'clients', 'tokens', 'revoke', app.id);
    expect(human.stdout).to.match(/^Machine tokens revoked: /);
    await refused('No client with id nope', 'clients', 'tokens', 'revoke', 'nope');
    const help = await campus(uri, 'apps', 'tokens', 'revoke', '--help');
    expect(help.stdout).to.include('revoke every machine token of the app at once');
  });
});
