import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { exportJWK, generateKeyPair } from 'jose';
import { errors } from 'oidc-provider';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { hashStoredCredentials, moveClaimsToRecords, OAuthStore } from '../../src/data/accounts/oauth-records.js';
import { AccountService, DuplicateAccountError } from '../../src/oauth/accounts.js';
import { createAdapterFactory } from '../../src/oauth/adapter.js';
import { AppService, AppValidationError } from '../../src/oauth/apps.js';
import { loadOAuthKeys, OAuthKeyError } from '../../src/oauth/signing-keys.js';
import { clientSecretMatches } from '../../src/oauth/secrets.js';
import { testDatabaseUri } from '../helpers/database.js';

/** The oidc-provider adapter, keys, accounts and clients against the real database (FerretDB in CI). */
describe('OAuth apps: storage on the real database', () => {
  let uri: string;
  let db: Database;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  let store: OAuthStore;
  let clients: AppService;
  let adapter: ReturnType<typeof createAdapterFactory>;

  before(async () => {
    uri = testDatabaseUri('oauth_store');
    db = await openDatabase(uri);
    await db.ensureIndexes();
    store = new OAuthStore(db, now);
    clients = new AppService(db, { isProduction: false });
    adapter = createAdapterFactory(store, clients);
  });
  after(async () => {
    await db.connection.dropDatabase();
    await db.close();
  });
  beforeEach(() => {
    offsetMs = 0;
  });

  describe('adapter', () => {
    it('stores payloads whose keys hold dots and colons, and finds them again', async () => {
      const payload = {
        kind: 'Grant',
        jti: 'g1',
        accountId: '1',
        clientId: 'c',
        resources: { 'http://127.0.0.1:8080/userinfo': 'self:read' },
      };
      await adapter('Grant').upsert('g1', payload, 3600);
      expect(await adapter('Grant').find('g1')).to.deep.equal(payload);
      expect(await adapter('AccessToken').find('g1')).to.equal(undefined);
    });

    it('survives a restart: a new connection reads what the old one wrote', async () => {
      await adapter('Session').upsert('s1', { kind: 'Session', uid: 'uid-1', accountId: '7' }, 3600);
      const reopened = await openDatabase(uri);
      try {
        const again = createAdapterFactory(new OAuthStore(reopened), clients);
        expect(await again('Session').findByUid('uid-1')).to.include({ accountId: '7' });
      } finally {
        await reopened.close();
      }
    });

    it('expires records on time (injected clock), and the sweep deletes them', async () => {
      await adapter('AuthorizationCode').upsert('c1', { kind: 'AuthorizationCode', grantId: 'gX' }, 300);
      await adapter('AuthorizationCode').upsert('c2', { kind: 'AuthorizationCode', grantId: 'gX' }, 900);
      offsetMs = 299 * 1000;
      expect(await adapter('AuthorizationCode').find('c1')).to.not.equal(undefined);
      offsetMs = 301 * 1000;
      expect(await adapter('AuthorizationCode').find('c1')).to.equal(undefined);
      expect(await db.models.oauthRecords.countDocuments({ _id: 'AuthorizationCode:c1' })).to.equal(0);
      offsetMs = 901 * 1000;
      expect(await store.sweepExpired()).to.be.at.least(1);
      expect(await db.models.oauthRecords.countDocuments({ _id: 'AuthorizationCode:c2' })).to.equal(0);
    });

    it('consume marks first use; a concurrent second redemption revokes the grant and fails', async () => {
      const codes = adapter('AuthorizationCode');
      await adapter('Grant').upsert('g2', { kind: 'Grant', jti: 'g2' }, 3600);
      await codes.upsert('c3', { kind: 'AuthorizationCode', grantId: 'g2' }, 300);
      await adapter('RefreshToken').upsert('r3', { kind: 'RefreshToken', grantId: 'g2' }, 3600);
      await codes.consume('c3');
      expect((await codes.find('c3'))?.consumed).to.be.a('number');
      let error: unknown;
      await codes.consume('c3').catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(errors.InvalidGrant);
      expect(await adapter('Grant').find('g2')).to.equal(undefined);
      expect(await adapter('RefreshToken').find('r3')).to.equal(undefined);
    });

    it('codes and refresh tokens are kept only as hashes: no stored key or payload holds the id', async () => {
      const id = 'raw-refresh-token-value-1';
      await adapter('RefreshToken').upsert(id, { kind: 'RefreshToken', jti: id, grantId: 'g7', accountId: '7' }, 3600);
      const stored = await db.models.oauthRecords.find({ kind: 'RefreshToken', grantId: 'g7' }).lean();
      expect(stored.map((doc) => doc._id)).to.deep.equal([`RefreshToken:sha256:${createHash('sha256').update(id).digest('base64url')}`]);
      expect(JSON.stringify(stored)).to.not.include(id);
      expect(await adapter('RefreshToken').find(id)).to.deep.equal({ kind: 'RefreshToken', jti: id, grantId: 'g7', accountId: '7' });
      // A grant id is no credential (every access token carries it): kept as it is.
      await adapter('Grant').upsert('g7', { kind: 'Grant', jti: 'g7' }, 3600);
      expect(await db.models.oauthRecords.countDocuments({ _id: 'Grant:g7' })).to.equal(1);
    });

    it('the migrations move codes, refresh tokens and their claims stored under raw ids to their hashes, claims beside them', async () => {
      const { oauthRecords } = db.models;
      const oauthClaims = db.connection.collection<{ _id: string; expiresAt: Date | null; claimedAt: Date }>('oauth_claims');
      const raw = { kind: 'AuthorizationCode', grantId: 'g8', uid: null, userCode: null, clientId: null, accountId: '8' };
      await oauthRecords.insertMany([
        {
          ...raw,
          _id: 'AuthorizationCode:old-code-1',
          payload: JSON.stringify({ kind: 'AuthorizationCode', jti: 'old-code-1', grantId: 'g8' }),
          expiresAt: new Date(Date.now() + 60_000),
        },
      ]);
      await oauthClaims.insertMany([{ _id: 'AuthorizationCode:old-code-1', expiresAt: null, claimedAt: new Date() }]);
      await hashStoredCredentials(db);
      await hashStoredCredentials(db);
      const hashed = `AuthorizationCode:sha256:${createHash('sha256').update('old-code-1').digest('base64url')}`;
      expect((await oauthRecords.find({ grantId: 'g8' }).lean()).map((doc) => doc._id)).to.deep.equal([hashed]);
      expect((await oauthClaims.find({ _id: /^AuthorizationCode:/ }).toArray()).map((doc) => doc._id))
        .to.include(hashed)
        .and.not.include('AuthorizationCode:old-code-1');
      await moveClaimsToRecords(db);
      await moveClaimsToRecords(db);
      expect(await oauthRecords.findOne({ _id: `${hashed}#claim` }).lean()).to.deep.include({
        kind: 'Claim',
        grantId: null,
        successor: null,
      });
      expect((await db.client.db().listCollections({ name: 'oauth_claims' }).toArray()).length).to.equal(0);
      // Claimed before the migration: found as used, and still spent.
      const found = await adapter('AuthorizationCode').find('old-code-1');
      expect(found).to.deep.include({ kind: 'AuthorizationCode', jti: 'old-code-1', grantId: 'g8' });
      expect(found?.consumed).to.be.a('number');
      let error: unknown;
      await adapter('AuthorizationCode')
        .consume('old-code-1')
        .catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(errors.InvalidGrant);
    });

    it('revokeByGrantId removes only that kind of that grant', async () => {
      await adapter('RefreshToken').upsert('r4', { kind: 'RefreshToken', grantId: 'g4' }, 3600);
      await adapter('RefreshToken').upsert('r5', { kind: 'RefreshToken', grantId: 'g5' }, 3600);
      await adapter('AuthorizationCode').upsert('c4', { kind: 'AuthorizationCode', grantId: 'g4' }, 300);
      await adapter('RefreshToken').revokeByGrantId('g4');
      expect(await adapter('RefreshToken').find('r4')).to.equal(undefined);
      expect(await adapter('RefreshToken').find('r5')).to.not.equal(undefined);
      expect(await adapter('AuthorizationCode').find('c4')).to.not.equal(undefined);
    });

    it('a session is found by its uid through a pointer record; a re-saved record is replaced', async () => {
      await adapter('Session').upsert('s9', { kind: 'Session', uid: 'uid-9', accountId: '3' }, 3600);
      await adapter('Session').upsert('s9', { kind: 'Session', uid: 'uid-9', accountId: '3', loginTs: 5 }, 3600);
      expect(await adapter('Session').findByUid('uid-9')).to.deep.equal({ kind: 'Session', uid: 'uid-9', accountId: '3', loginTs: 5 });
      expect(await adapter('Session').findByUid('uid-unknown')).to.equal(undefined);
      await adapter('Session').destroy('s9');
      expect(await adapter('Session').findByUid('uid-9')).to.equal(undefined);
    });

    it('logins in progress are kept apart from grants and tokens: saved, re-saved, destroyed, swept and revoked there', async () => {
      const { oauthRecords, oauthInteractions } = db.models;
      const interactions = adapter('Interaction');
      const params = { client_id: 'app-i' };
      await interactions.upsert('i1', { kind: 'Interaction', params }, 3600);
      await interactions.upsert('i1', { kind: 'Interaction', params, result: { login: { accountId: '5' } } }, 3600);
      expect(await interactions.find('i1')).to.deep.equal({ kind: 'Interaction', params, result: { login: { accountId: '5' } } });
      expect(await oauthInteractions.countDocuments({ _id: 'Interaction:i1', clientId: 'app-i' })).to.equal(1);
      expect(await oauthRecords.countDocuments({ kind: 'Interaction' })).to.equal(0);
      await interactions.destroy('i1');
      expect(await interactions.find('i1')).to.equal(undefined);
      expect(await oauthInteractions.countDocuments({ _id: 'Interaction:i1' })).to.equal(0);

      await interactions.upsert('i2', { kind: 'Interaction', params }, 60);
      offsetMs = 61 * 1000;
      await store.sweepExpired();
      expect(await oauthInteractions.countDocuments({ _id: 'Interaction:i2' })).to.equal(0);
      offsetMs = 0;

      await interactions.upsert('i3', { kind: 'Interaction', params }, 3600);
      await interactions.upsert('i4', { kind: 'Interaction', params: { client_id: 'app-other' } }, 3600);
      await store.revokeAllOf({ clientId: 'app-i' });
      expect(await interactions.find('i3')).to.equal(undefined);
      expect(await interactions.find('i4')).to.not.equal(undefined);
    });
    it('clients come from the client registry, with the secret only as a hash', async () => {
      const { client, secret } = await clients.create({ name: 'Registry test', redirectUris: ['https://app.example/cb'] });
      const metadata = await adapter('Client').find(client.id);
      expect(metadata).to.include({ client_id: client.id, token_endpoint_auth_method: 'client_secret_basic', first_party: false });
      expect(metadata?.['client_secret']).to.match(/^[0-9a-f]{64}$/);
      expect(metadata?.['client_secret']).to.not.equal(secret);
      expect(clientSecretMatches(secret ?? '', String(metadata?.['client_secret']))).to.equal(true);
      expect(clientSecretMatches(`${secret}x`, String(metadata?.['client_secret']))).to.equal(false);
      expect(JSON.stringify(await db.models.oauthClients.find().lean())).to.not.include(secret ?? '-');
    });
  });

  describe('keys', () => {
    it('development keys are generated once and kept (the same kid after a restart)', async () => {
      const config = loadConfig({ NODE_ENV: 'development' });
      const first = await loadOAuthKeys(config, db);
      const second = await loadOAuthKeys(config, db);
      expect(first.privateJwks.keys[0]?.kid).to.be.a('string');
      expect(second.privateJwks.keys[0]?.kid).to.equal(first.privateJwks.keys[0]?.kid);
      expect(second.cookieKeys).to.deep.equal(first.cookieKeys);
      expect(first.publicJwks.keys[0]).to.not.have.property('d');
      expect(first.signingAlg).to.equal('RS256');
    });

    it('configured keys win; a key set without kid or private part stops the start-up', async () => {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const jwk = { ...(await exportJWK(privateKey)), kid: 'configured-1' };
      const config = loadConfig({ NODE_ENV: 'development', OAUTH_JWKS: JSON.stringify({ keys: [jwk] }), OAUTH_COOKIE_KEYS: 'one,two' });
      const keys = await loadOAuthKeys(config, db);
      expect(keys.signingAlg).to.equal('ES256');
      expect(keys.publicJwks.keys.map((k) => k.kid)).to.deep.equal(['configured-1']);
      expect(keys.cookieKeys).to.deep.equal(['one', 'two']);

      const { d: _d, ...publicOnly } = jwk;
      for (const bad of [
        'not json',
        '{"keys":[]}',
        JSON.stringify({ keys: [{ ...jwk, kid: undefined }] }),
        JSON.stringify({ keys: [publicOnly] }),
      ]) {
        let error: unknown;
        await loadOAuthKeys(loadConfig({ NODE_ENV: 'development', OAUTH_JWKS: bad }), db).catch((err: unknown) => (error = err));
        expect(error, bad).to.be.instanceOf(OAuthKeyError);
      }
    });
  });

  describe('accounts and clients', () => {
    it('passwords are stored as argon2id hashes; an email is taken once', async () => {
      const accounts = new AccountService(db);
      const created = await accounts.create({ email: 'Hash@School.Test', password: 'a long password' });
      expect(created.email).to.equal('hash@school.test');
      const doc = await db.models.accounts.findOne({ _id: created.id }).lean();
      expect(doc?.passwordHash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(await accounts.verifyLogin('HASH@school.test', 'a long password')).to.include({ _id: created.id });
      expect(await accounts.verifyLogin('hash@school.test', 'wrong')).to.equal(null);
      let error: unknown;
      await accounts.create({ email: 'hash@school.test', password: 'another password' }).catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(DuplicateAccountError);
    });

    it('production refuses plain-http redirect addresses except on loopback', async () => {
      const production = new AppService(db, { isProduction: true });
      let error: unknown;
      await production.create({ name: 'x', redirectUris: ['http://app.example/cb'] }).catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(AppValidationError);
      const loopback = await production.create({
        name: 'native',
        redirectUris: ['http://127.0.0.1:7777/cb', 'https://app.example/cb'],
        public: true,
      });
      expect(loopback.secret).to.equal(null);
      expect(loopback.client.type).to.equal('public');
    });
  });
});
