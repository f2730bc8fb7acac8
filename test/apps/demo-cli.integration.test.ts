import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { DEMO_API_KEY, demoAccountEmail } from '../../src/data/school/demo.js';
import { hashApiKey } from '../../src/data/keys/store.js';
import { DEMO_OAUTH } from '../../src/oauth/seed.js';
import { runCampus, startCampus } from '../helpers/cli.js';
import { testDatabaseUri } from '../helpers/database.js';
import { generateJwks } from '../helpers/oauth.js';

/**
 * Production refuses the published demo credentials: `campus serve` will not start while the
 * demo API key, the demo clients or the demo account exist, and `campus seed --remove-demo`
 * removes exactly those (with their grants and tokens), leaving the school's data alone.
 * Everything through the real `campus` command.
 */
describe('OAuth apps: campus serve in production refuses demo credentials; campus seed --remove-demo', function () {
  this.timeout(180000);
  let uri: string;
  let db: Database;
  let production: Record<string, string>;

  before(async () => {
    uri = testDatabaseUri('demo_prod');
    db = await openDatabase(uri);
    await db.ensureIndexes();
    production = {
      NODE_ENV: 'production',
      MONGODB_URI: uri,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      AUTH_URL: 'https://auth.school.test',
      USERINFO_URL: 'https://auth.school.test',
      BASE_URL: 'https://api.school.test',
      OAUTH_JWKS: await generateJwks(),
      OAUTH_COOKIE_KEYS: 'a-production-cookie-key-of-32-characters',
      // Production asks for a mail server; nothing here sends mail.
      SMTP_URL: 'smtp://127.0.0.1:2525',
      TRUSTED_PROXIES: '127.0.0.1',
      NEIS_SYNC_ENABLED: 'false',
    };
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });

  it('serve refuses to start with demo data present, names what and how to remove it; after --remove-demo it starts', async () => {
    const seeded = await runCampus({ MONGODB_URI: uri }, ['seed', '--demo']);
    expect(seeded.code, seeded.stderr).to.equal(0);
    // A real client and account registered next to the demo ones must survive the removal.
    const real = await runCampus({ MONGODB_URI: uri }, [
      'clients',
      'create',
      '--name',
      'Real app',
      '--redirect-uri',
      'https://app.school.test/cb',
      '--json',
    ]);
    const realClient = (JSON.parse(real.stdout) as { id: string }).id;
    const realAccount = await runCampus(
      { MONGODB_URI: uri },
      ['accounts', 'create', '--email', 'teacher@school.test', '--password-stdin'],
      { stdin: 'a real password\n' },
    );
    expect(realAccount.code, realAccount.stderr).to.equal(0);
    const students = await db.models.students.countDocuments();
    const meals = await db.models.meals.countDocuments();
    expect(students).to.be.greaterThan(0);

    const refused = await runCampus(production, ['serve', '--json']);
    expect(refused.code).to.equal(1);
    expect(refused.stdout).to.equal('');
    expect(refused.stderr).to.equal(
      `campus: Refusing to start in production while demo credentials exist (the demo API key de70c0de…, the demo clients ${DEMO_OAUTH.clientId}, ${DEMO_OAUTH.publicClientId}, the demo account ${demoAccountEmail()}): remove them with \`campus seed --remove-demo\`.\n`,
    );

    // --remove-demo works in production and removes exactly the demo credentials.
    const removed = await runCampus(production, ['seed', '--remove-demo', '--json']);
    expect(removed.code, removed.stderr).to.equal(0);
    const summary = JSON.parse(removed.stdout) as { apiKeys: number; clientIds: string[]; accountEmails: string[]; revoked: number };
    expect(summary).to.deep.include({
      apiKeys: 1,
      clientIds: [DEMO_OAUTH.clientId, DEMO_OAUTH.publicClientId],
      accountEmails: [demoAccountEmail()],
    });
    expect(await db.models.apiKeys.countDocuments({ hash: hashApiKey(DEMO_API_KEY) })).to.equal(0);
    expect(await db.models.oauthClients.countDocuments({ _id: { $in: [DEMO_OAUTH.clientId, DEMO_OAUTH.publicClientId] } })).to.equal(0);
    expect(await db.models.accounts.countDocuments({ email: demoAccountEmail() })).to.equal(0);
    // The school's data and everything else stay.
    expect(await db.models.students.countDocuments()).to.equal(students);
    expect(await db.models.meals.countDocuments()).to.equal(meals);
    expect(await db.models.oauthClients.countDocuments({ _id: realClient })).to.equal(1);
    expect(await db.models.accounts.countDocuments({ email: 'teacher@school.test' })).to.equal(1);

    const again = await runCampus(production, ['seed', '--remove-demo']);
    expect(again.stdout).to.equal('No demo credentials found; nothing removed.\n');

    const serve = await startCampus(production, ['serve', '--json']);
    try {
      const { url } = JSON.parse(serve.firstLine) as { url: string };
      const health = await fetch(`${url}/v1/health`, { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(health.status).to.equal(200);
      expect(health.headers.get('strict-transport-security')).to.equal('max-age=31536000; includeSubDomains');
    } finally {
      expect(await serve.stop()).to.equal(0);
    }
  });

  it('a demo account whose password was changed is a real account: not refused, not removed', async () => {
    const email = demoAccountEmail();
    const created = await runCampus({ MONGODB_URI: uri }, ['accounts', 'create', '--email', email, '--password-stdin'], {
      stdin: 'a password of their own\n',
    });
    expect(created.code, created.stderr).to.equal(0);
    const removed = await runCampus(production, ['seed', '--remove-demo']);
    expect(removed.stdout).to.equal('No demo credentials found; nothing removed.\n');
    expect(await db.models.accounts.countDocuments({ email })).to.equal(1);
  });

  it('seed refuses --demo in production, refuses --demo with --remove-demo, and documents --remove-demo', async () => {
    const demo = await runCampus(production, ['seed', '--demo']);
    expect(demo.code).to.equal(1);
    expect(demo.stderr).to.equal('campus: Refusing to load demo data (and its published demo key) in production.\n');
    const both = await runCampus({ MONGODB_URI: uri }, ['seed', '--demo', '--remove-demo']);
    expect(both.stderr).to.equal('campus: Give either --demo or --remove-demo, not both.\n');
    const help = await runCampus({}, ['seed', '--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('--remove-demo');
    expect(help.stdout).to.include('--json');
  });
});
