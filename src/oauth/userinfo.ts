import { AccountStore, type AccountDoc } from '../data/accounts.js';
import type { Database } from '../data/database.js';
import type { ClubDoc } from '../data/models/club.model.js';
import type { StudentDoc } from '../data/models/student.model.js';
import { toAppError } from '../errors/index.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { AccessTokenRejected, type AccessTokenVerifier } from './access-token.js';
import { OAUTH_PATHS, SELF_READ } from './constants.js';

/** The userinfo answer of DECISIONS.md. */
export interface UserinfoResponse {
  sub: string;
  id: number;
  email: string;
  role: string;
  isStudent: boolean;
  student: Record<string, unknown> | null;
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * GET and POST /userinfo with `Authorization: Bearer <access token>`. The token is a JWT of
 * the token endpoint, verified here (signature, expiry, issuer, audience, live grant); 401
 * with WWW-Authenticate when it is missing, invalid, expired or revoked, 403 without
 * `self:read`. Browsers may call it from anywhere: it takes no cookies, only the bearer token.
 */
export function userinfoRoutes(deps: { db: Database; verifier: AccessTokenVerifier; realm: string }): AppMiddleware {
  const accounts = new AccountStore(deps.db);
  return async (ctx, next) => {
    if (ctx.path !== OAUTH_PATHS.userinfo) return next();
    allowCrossOrigin(ctx);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'POST') {
      ctx.set('Allow', 'GET, POST');
      return oauthJson(ctx, 405, { error: 'invalid_request', error_description: 'use GET or POST' });
    }
    try {
      await answer(ctx, deps, accounts);
    } catch (err) {
      serverFailure(ctx, err);
    }
  };
}

async function answer(ctx: AppContext, deps: { verifier: AccessTokenVerifier; realm: string }, accounts: AccountStore): Promise<void> {
  const token = BEARER.exec(ctx.get('authorization'))?.[1];
  if (!token) return unauthorized(ctx, deps.realm, 'missing bearer access token in the Authorization header');
  let verified;
  try {
    verified = await deps.verifier.verify(token);
  } catch (err) {
    if (err instanceof AccessTokenRejected) return unauthorized(ctx, deps.realm, err.message);
    throw err;
  }
  if (!verified.scopes.has(SELF_READ)) {
    ctx.set('WWW-Authenticate', `Bearer realm="${deps.realm}", error="insufficient_scope", scope="${SELF_READ}"`);
    return oauthJson(ctx, 403, { error: 'insufficient_scope', error_description: `the access token lacks the ${SELF_READ} scope` });
  }
  const account = /^\d+$/.test(verified.sub) ? await accounts.findById(Number(verified.sub)) : null;
  if (!account) return unauthorized(ctx, deps.realm, 'the account of the access token no longer exists');
  oauthJson(ctx, 200, await userinfoOf(account, accounts));
}

/** Builds the answer: the account, and the student with the same email as the data API shows it. */
export async function userinfoOf(account: AccountDoc, accounts: AccountStore): Promise<UserinfoResponse> {
  const student = await accounts.findStudent(account.email);
  const clubIds = student ? [student.majorClubId, student.autonomousClubId].filter((id): id is number => id != null) : [];
  const clubs = new Map((await accounts.findClubs(clubIds)).map((club) => [club._id, club]));
  return {
    sub: String(account._id),
    id: account._id,
    email: account.email,
    role: account.role,
    isStudent: student !== null,
    student: student ? studentRecord(student, clubs) : null,
  };
}

/** The Student record with the fields, order and club summaries of GET /v1/students. */
function studentRecord(s: StudentDoc, clubs: Map<number, ClubDoc>): Record<string, unknown> {
  return {
    id: s._id,
    name: s.name,
    sex: s.sex,
    email: s.email,
    grade: s.grade ?? null,
    classNum: s.classNum ?? null,
    number: s.number ?? null,
    studentNumber: s.studentNumber ?? null,
    major: s.major ?? null,
    role: s.role,
    dormitoryFloor: s.dormitoryFloor ?? null,
    dormitoryRoom: s.dormitoryRoom ?? null,
    majorClub: clubSummary(s.majorClubId, clubs),
    autonomousClub: clubSummary(s.autonomousClubId, clubs),
    specialty: s.specialty ?? null,
    githubId: s.githubId ?? null,
    githubUrl: s.githubUrl ?? null,
  };
}

function clubSummary(id: number | null | undefined, clubs: Map<number, ClubDoc>): Record<string, unknown> | null {
  const club = id == null ? undefined : clubs.get(id);
  return club ? { id: club._id, name: club.name, type: club.type } : null;
}

function unauthorized(ctx: AppContext, realm: string, description: string): void {
  ctx.set('WWW-Authenticate', `Bearer realm="${realm}", error="invalid_token", error_description="${description}"`);
  oauthJson(ctx, 401, { error: 'invalid_token', error_description: description });
}

function oauthJson(ctx: AppContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body;
}

function allowCrossOrigin(ctx: AppContext): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, POST');
  ctx.set('Access-Control-Allow-Headers', 'Authorization');
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate');
}

/** 503 while the database is down, else 500; the cause is logged, never sent. */
function serverFailure(ctx: AppContext, err: unknown): void {
  const error = toAppError(err);
  ctx.state.log.error({ err: error.cause ?? error }, 'userinfo failed');
  if (error.status === 503) {
    ctx.set('Retry-After', '5');
    return oauthJson(ctx, 503, { error: 'temporarily_unavailable', error_description: 'the database is unavailable; try again shortly' });
  }
  oauthJson(ctx, 500, { error: 'server_error', error_description: 'internal server error' });
}
