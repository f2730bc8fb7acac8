import { AccountStore, type AccountDoc } from '../data/accounts/store.js';
import type { Database } from '../data/database.js';
import type { SchoolSnapshot } from '../data/school/read-model.js';
import { toAppError } from '../data/platform/errors.js';
import { OAuthError, renderOAuthError } from '../http/errors.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { AccessTokenRejected, type AccessTokenVerifier } from './access-token.js';
import { OAUTH_PATHS, RESOURCE_SCOPES } from './constants.js';
import { ID_TOKEN_CLAIMS, releasedFields, type UserinfoKey } from './login-scopes.js';
import { clubSummary, type ClubSummary } from '../data/school/shapes.js';
import { studentRecord } from '../data/school/student-record.js';
import type { AccountRole, ProjectStatus } from '../data/__generated__/enums.js';

/**
 * The whole userinfo answer of docs/decisions.md; a token sees only the fields its scopes release
 * (src/oauth/login-scopes.ts), the others are absent. Its keys are those of the table's
 * USERINFO_FIELDS (userinfoOf checks both), whose JSON Schemas the client's type comes from.
 */
export interface UserinfoResponse {
  sub: string;
  id: number;
  email: string;
  role: AccountRole;
  isStudent: boolean;
  student: ReturnType<typeof studentRecord> | null;
  /** A teacher's record (name, department); null for anyone else. */
  teacher: { name: string | null; department: string | null } | null;
  /** The person's clubs (their major and autonomous club), as summaries. */
  clubs: ClubSummary[];
  /** The projects the person takes part in, as summaries. */
  projects: { id: number; name: string; status: ProjectStatus }[];
  /** OpenID Connect's standard claims (the `email` and `profile` scopes). */
  email_verified: boolean;
  name: string | null;
  preferred_username: string;
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * GET and POST /userinfo with `Authorization: Bearer <access token>`. The token is a JWT of
 * the token endpoint, verified here (signature, expiry, issuer, audience, live grant); 401
 * with WWW-Authenticate when it is missing, invalid, expired or revoked, 403 without any of
 * the login scopes that release data (self:read, account:read, student:read, club:read,
 * project:read). The answer holds exactly the fields the token's scopes release. Browsers may call it from anywhere: it takes no cookies, only the bearer token.
 */
export interface UserinfoDeps {
  db: Database;
  verifier: AccessTokenVerifier;
  realm: string;
  /** The address of userinfo's protected resource metadata (RFC 9728), named in every 401. */
  resourceMetadata?: string;
  /** Whether the app a token was issued to may still read (a disabled app's tokens stop here at once). */
  clientActive?: (clientId: string) => Promise<boolean>;
}

export function userinfoRoutes(deps: UserinfoDeps): AppMiddleware {
  const accounts = new AccountStore(deps.db);
  return async (ctx, next) => {
    if (ctx.path !== OAUTH_PATHS.userinfo) return next();
    allowCrossOrigin(ctx);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    try {
      if (ctx.method !== 'GET' && ctx.method !== 'POST')
        throw new OAuthError('METHOD_NOT_ALLOWED', 'invalid_request', 'use GET or POST', { Allow: 'GET, POST' });
      await answer(ctx, deps, accounts);
    } catch (err) {
      renderOAuthError(ctx, toAppError(err));
    }
  };
}

async function answer(ctx: AppContext, deps: UserinfoDeps, accounts: AccountStore): Promise<void> {
  const token = BEARER.exec(ctx.get('authorization'))?.[1];
  const refused = (description: string) => invalidToken(deps, description);
  if (!token) throw refused('missing bearer access token in the Authorization header');
  const verified = await deps.verifier.verify(token).catch((err: unknown) => {
    throw err instanceof AccessTokenRejected ? refused(err.message) : err;
  });
  if (!RESOURCE_SCOPES.some((scope) => verified.scopes.has(scope))) {
    throw new OAuthError('FORBIDDEN', 'insufficient_scope', `the access token has none of the scopes ${RESOURCE_SCOPES.join(', ')}`, {
      'WWW-Authenticate': `Bearer realm="${deps.realm}", error="insufficient_scope", scope="${RESOURCE_SCOPES.join(' ')}"`,
    });
  }
  if (deps.clientActive && !(await deps.clientActive(verified.clientId))) throw refused('the app of the access token is disabled');
  // Remembered until a change names the account (src/data/accounts/store.ts, known): a repeated call reads no account.
  const account = /^\d+$/.test(verified.sub) ? (await accounts.known(Number(verified.sub)))?.doc : undefined;
  if (!account) throw refused('the account of the access token no longer exists');
  // A disabled account's tokens stop here at once (the account moved the `oauth` version).
  if (account.disabledAt) throw refused('the account of the access token is disabled');
  ctx.set('Cache-Control', 'no-store');
  ctx.body = released(userinfoOf(account, await deps.db.school.snapshot()), verified.scopes);
}

/** The fields of the answer that `scopes` release, in the answer's order. */
export function released(answer: UserinfoResponse, scopes: Iterable<string>): Partial<UserinfoResponse> {
  const fields = releasedFields(scopes);
  return Object.fromEntries(Object.entries(answer).filter(([key]) => fields.has(key))) as Partial<UserinfoResponse>;
}

/** What userinfo shows of an account. */
type ShownAccount = Pick<AccountDoc, '_id' | 'email' | 'role' | 'name' | 'department'>;

/**
 * Builds the answer: the account, and the student with the same email as the data API shows it,
 * from the school held in memory at the current data version (src/data/school/read-model.ts).
 */
export function userinfoOf(account: ShownAccount, school: SchoolSnapshot): UserinfoResponse {
  const student = school.studentByEmail(account.email) ?? null;
  // Exactly the table's keys (a key added there must be built here), and exactly the interface's.
  return {
    sub: String(account._id),
    id: account._id,
    email: account.email,
    role: account.role,
    isStudent: student !== null,
    student: student ? studentRecord(student, school.clubs) : null,
    teacher: account.role === 'TEACHER' ? { name: account.name ?? null, department: account.department ?? null } : null,
    clubs: student
      ? [student.majorClubId, student.autonomousClubId].flatMap((id) => {
          const club = clubSummary(id, school.clubs);
          return club ? [club] : [];
        })
      : [],
    projects: student
      ? school.projects.all
          .filter((p) => (p.participantIds ?? []).includes(student._id))
          .map((p) => ({ id: p._id, name: p.name, status: p.status ?? 'ACTIVE' }))
      : [],
    // Sign-up proves the address with a mailed code, and only an operator makes accounts otherwise.
    email_verified: true,
    name: student?.name ?? account.name ?? null,
    preferred_username: account.email.split('@')[0] ?? account.email,
  } satisfies Record<UserinfoKey, unknown>;
}

/**
 * The standard claims the ID token carries for the scopes granted (src/oauth/login-scopes.ts,
 * ID_TOKEN_CLAIMS), built like userinfo's answer; a claim without a value (a name the school does
 * not have) is left out. Undefined when the account is gone.
 */
export async function idTokenClaims(
  db: Database,
  accountId: number,
  scopes: readonly string[],
): Promise<Record<string, unknown> | undefined> {
  const wanted = new Set(scopes.flatMap((scope) => ID_TOKEN_CLAIMS[scope] ?? []));
  if ([...wanted].every((claim) => claim === 'sub')) return {};
  const account = (await new AccountStore(db).known(accountId))?.doc;
  if (!account) return undefined;
  const answer = userinfoOf(account, await db.school.snapshot());
  return Object.fromEntries(Object.entries(answer).filter(([key, value]) => wanted.has(key) && value !== null));
}

/** 401 `invalid_token`, also in WWW-Authenticate (RFC 6750 section 3), with where tokens come from (RFC 9728, 5.1). */
function invalidToken(deps: Pick<UserinfoDeps, 'realm' | 'resourceMetadata'>, description: string): OAuthError {
  const metadata = deps.resourceMetadata ? `, resource_metadata="${deps.resourceMetadata}"` : '';
  return new OAuthError('UNAUTHORIZED', 'invalid_token', description, {
    'WWW-Authenticate': `Bearer realm="${deps.realm}", error="invalid_token", error_description="${description}"${metadata}`,
  });
}

function allowCrossOrigin(ctx: AppContext): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, POST');
  ctx.set('Access-Control-Allow-Headers', 'Authorization');
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate');
}
