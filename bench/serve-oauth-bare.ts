// The baseline: bare oidc-provider with its in-memory adapter, configured for the same work
// (rotating refresh tokens, JWT access tokens for a resource server) and its built-in userinfo,
// and a login form that checks one argon2id password with the production parameters: what a
// whole login costs with nothing of ours around the provider (bench/logins.ts).
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { hashPassword, verifyPassword } from '../src/oauth/secrets.js';
import { listenOnLoopback, serve } from './serve.js';

// The client is given by bench/oauth.ts (which also mints the tokens).
const BARE_CLIENT = {
  id: process.env['BENCH_CLIENT_ID'] ?? '',
  secret: process.env['BENCH_CLIENT_SECRET'] ?? '',
  redirectUri: process.env['BENCH_REDIRECT_URI'] ?? '',
};
/** The one password the login form accepts (any email), stored as our accounts store theirs. */
const passwordHash = await hashPassword(process.env['BENCH_PASSWORD'] ?? '');

const { server, url: issuer } = await listenOnLoopback();
const audience = `${issuer}/resource`;

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const provider = new Provider(issuer, {
  jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'bare', alg: 'RS256', use: 'sig' }] },
  cookies: { keys: ['bench-only-cookie-key'] },
  clients: [
    {
      client_id: BARE_CLIENT.id,
      client_secret: BARE_CLIENT.secret,
      redirect_uris: [BARE_CLIENT.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  rotateRefreshToken: true,
  issueRefreshToken: async () => true,
  expiresWithSession: async () => false,
  pkce: { required: () => false },
  scopes: ['openid'],
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 300,
    RefreshToken: 30 * 24 * 3600,
    Grant: 30 * 24 * 3600,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
  },
  interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Every grant holds what was asked for (no consent page in the baseline).
  loadExistingGrant: async (ctx) => {
    const oidc = ctx.oidc;
    if (!oidc?.client || !oidc.session?.accountId) return undefined;
    const grant = new oidc.provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId });
    if (oidc.requestParamOIDCScopes.size > 0) grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '));
    if (oidc.requestParamScopes.has('self:read')) grant.addResourceScope(audience, 'self:read');
    await grant.save();
    return grant;
  },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => audience,
      useGrantedResource: async () => false,
      getResourceServerInfo: async () => ({
        scope: 'self:read',
        audience,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});

// The login page: a form (GET), then the password checked and account 1 signed in (POST).
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  if (ctx.method === 'GET') {
    ctx.type = 'html';
    ctx.body = `<form method="post" action="${ctx.path}"><input name="csrf" value="bare"><input name="email"><input name="password"></form>`;
    return;
  }
  const form = new URLSearchParams(await readBody(ctx.req));
  if (!(await verifyPassword(passwordHash, form.get('password') ?? ''))) {
    ctx.status = 401;
    ctx.body = 'wrong password';
    return;
  }
  await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: '1' } }, { mergeWithLastSubmission: false });
  ctx.respond = false;
});

function readBody(req: NodeJS.ReadableStream): Promise<string> {
  return new Promise((done, fail) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => done(body));
    req.on('error', fail);
  });
}

serve(server, issuer, provider.callback());
