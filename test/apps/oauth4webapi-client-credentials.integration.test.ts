import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import { DEMO_API_KEY } from '../../src/data/school/demo.js';
import { eventually } from '../helpers/receiver.js';
import { registerMachineApp, serveDemo, type ServedDemo } from '../helpers/serve.js';

/**
 * oauth4webapi (a client library nobody here wrote) drives the machine-token flow against a live
 * `campus serve`, as an app server that knows only the data API's address would: the data API's
 * 401 names its protected resource metadata (RFC 9728), which names the authorization server; its
 * metadata (RFC 8414) gives the token endpoint; the client credentials grant (RFC 6749 4.4) with
 * the data API as the resource (RFC 8707) gives a JWT access token, which oauth4webapi validates
 * as a resource server would (RFC 9068) and sends to the data API; then introspection and
 * revocation (RFC 7662, RFC 7009).
 */
describe('OAuth apps: oauth4webapi drives client_credentials against campus serve', function () {
  this.timeout(120000);
  let served: ServedDemo;
  let app: { id: string; clientSecret: string };
  /** Plain http is allowed on the test's loopback address only. */
  const insecure = { [oauth.allowInsecureRequests]: true };

  before(async () => {
    served = await serveDemo('oauth4webapi_cc');
    app = await registerMachineApp(served, 'oauth4webapi', 'CLUB_READ');
  });
  after(async () => {
    await served?.stop();
  });

  it('from the data API alone to its answer: resource metadata, issuer metadata, a machine token, the same answer as a key', async () => {
    const clubs = new URL('/v1/clubs?size=3', served.url);
    // 1. Without a token (or with a wrong one), the data API says where its tokens come from.
    const bare = await fetch(clubs);
    expect(bare.status).to.equal(401);
    expect(bare.headers.get('www-authenticate')).to.equal(`Bearer resource_metadata="${served.url}/.well-known/oauth-protected-resource"`);
    const challenge = await oauth.protectedResourceRequest('not-a-token', 'GET', clubs, undefined, undefined, insecure).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(challenge).to.be.instanceOf(oauth.WWWAuthenticateChallengeError);
    const [bearer] = (challenge as oauth.WWWAuthenticateChallengeError).cause;
    expect(bearer?.scheme).to.equal('bearer');
    expect(bearer?.parameters.error).to.equal('invalid_token');
    const metadataUrl = String(bearer?.parameters['resource_metadata']);
    expect(metadataUrl).to.equal(`${served.url}/.well-known/oauth-protected-resource`);

    // 2. The protected resource's metadata, checked by oauth4webapi against the resource identifier.
    const resource = new URL(served.url);
    const prm = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
    expect(prm.scopes_supported).to.deep.equal(['STUDENT_READ', 'CLUB_READ', 'PROJECT_READ', 'NEIS_READ']);
    expect(prm.bearer_methods_supported).to.deep.equal(['header']);
    const issuer = new URL(String(prm.authorization_servers?.[0]));

    // 3. The authorization server's metadata (RFC 8414 path), which names the grant.
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    expect(as.grant_types_supported).to.include('client_credentials');
    expect(as.protected_resources).to.deep.equal([prm.resource, `${served.url}/userinfo`]);

    // 4. The token: client credentials with HTTP Basic, for the data API.
    const client: oauth.Client = { client_id: app.id };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'CLUB_READ', resource: prm.resource }, insecure);
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    expect(tokens.token_type).to.equal('bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.scope).to.equal('CLUB_READ');
    expect(tokens.refresh_token).to.equal(undefined);

    // 5. Validated as a resource server would (RFC 9068: type, issuer, audience, signature by the JWKS).
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(clubs, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      prm.resource,
      insecure,
    );
    expect(claims).to.include({ client_id: app.id, sub: app.id, iss: served.url, scope: 'CLUB_READ' });

    // 6. The data API answers it as it answers a key with the same scope.
    const answer = await oauth.protectedResourceRequest(tokens.access_token, 'GET', clubs, undefined, undefined, insecure);
    const keyed = await fetch(clubs, { headers: { 'X-API-KEY': DEMO_API_KEY } });
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('etag')).to.equal(keyed.headers.get('etag'));
    expect(await answer.text()).to.equal(await keyed.text());

    // 7. Introspection says it is active; once revoked, it is not, and the data API refuses it.
    const introspect = async () =>
      oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure));
    expect(await introspect()).to.include({ active: true, client_id: app.id, scope: 'CLUB_READ' });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure));
    expect(await introspect()).to.deep.equal({ active: false });
    const refused = await eventually(
      async () =>
        oauth.protectedResourceRequest(tokens.access_token, 'GET', clubs, undefined, undefined, insecure).then(
          () => false,
          (err: unknown) => err,
        ),
      2000,
      'the revoked token refused',
    );
    expect(refused).to.be.instanceOf(oauth.WWWAuthenticateChallengeError);
    expect((refused as oauth.WWWAuthenticateChallengeError).cause[0]?.parameters.error).to.equal('invalid_token');
  });

  it('refuses a scope the app was not registered for, and a wrong secret, in the errors oauth4webapi reads', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(served.url),
      await oauth.discoveryRequest(new URL(served.url), { algorithm: 'oauth2', ...insecure }),
    );
    const client: oauth.Client = { client_id: app.id };
    const attempt = async (secret: string, scope: string) =>
      oauth
        .processClientCredentialsResponse(
          as,
          client,
          await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(secret), { scope }, insecure),
        )
        .then(
          () => undefined,
          (err: unknown) => err,
        );
    const scope = await attempt(app.clientSecret, 'STUDENT_READ');
    expect(scope).to.be.instanceOf(oauth.ResponseBodyError);
    expect((scope as oauth.ResponseBodyError).error).to.equal('invalid_scope');
    const secret = await attempt('wrong', 'CLUB_READ');
    expect(secret).to.be.instanceOf(oauth.ResponseBodyError);
    expect((secret as oauth.ResponseBodyError).status).to.equal(401);
    expect((secret as oauth.ResponseBodyError).error).to.equal('invalid_client');
  });
});
