import { z } from 'zod';
import { STAFF_SECOND_FACTORS, type PolicySettings } from '../auth/policy.js';
import { scopePolicySpec } from './scope-policy.js';
import { MisconfiguredError } from '../errors/index.js';

/**
 * The fields of a student record its student may be asked to confirm or correct at sign-in
 * (src/data/school/student-fields.ts), and of which STUDENT_SELF_EDIT_FIELDS names
 * those a student edits in /console/profile at any time.
 */
export const STUDENT_SELF_FIELDS = ['studentNumber', 'dormitoryRoom', 'majorClubId', 'autonomousClubId', 'githubId', 'specialty'] as const;
export type StudentSelfField = (typeof STUDENT_SELF_FIELDS)[number];

/** A comma-separated list of student fields (STUDENT_SELF_FIELDS), each at most once. */
const studentFieldList = z
  .string()
  .transform((v) => [
    ...new Set(
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(z.enum(STUDENT_SELF_FIELDS)));

/**
 * Every environment variable the service reads, with its default and its description: the one
 * place both live. `npm run docs` (scripts/readme-tables.ts) writes docs/configuration.md from them.
 */
const booleanFlag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => v === 'true' || v === 'false', 'must be true or false')
  .transform((v) => v === 'true');

const port = z.coerce.number().int().min(0).max(65535);

/** `<requests>/<seconds>`: the one syntax of every rate limit (variables and `campus keys --rate-limit`). */
export const rateLimitSpec = z
  .string()
  .regex(/^\d+\/\d+$/, 'must look like <requests>/<seconds>, e.g. 100/60')
  .transform((v) => {
    const [points, seconds] = v.split('/').map(Number);
    return { points: points ?? 0, durationSeconds: seconds ?? 0 };
  })
  .refine((r) => r.points >= 1 && r.durationSeconds >= 1, 'requests and seconds must both be at least 1');

const optionalUrl = z.url().optional();

/** A time of day, HH:MM in 24-hour time (daily jobs). */
const dailyTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM in 24-hour time');

export const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'])
    .default('development')
    .describe(
      '`production` refuses the development defaults (it requires MONGODB_URI or FERRETDB_POSTGRESQL_URL, https AUTH_URL, USERINFO_URL and BASE_URL, OAUTH_JWKS, OAUTH_COOKIE_KEYS and SMTP_URL) and plain HTTP, and refuses `campus seed --demo`.',
    ),
  HOST: z.string().min(1).default('127.0.0.1').describe('The address `campus serve` listens on.'),
  PORT: port.default(8080).describe('The port `campus serve` listens on.'),
  // How `campus serve` stops on SIGTERM or SIGINT (src/main.ts; docs/operations.md, "11. Restarts
  // and rolling upgrades"): the drain outlasts the proxy's passive checks.
  SHUTDOWN_DRAIN_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(300)
    .default(5)
    .describe(
      "On SIGTERM or SIGINT, `campus serve` answers `/readyz` with 503 and goes on serving for this long, so that a load balancer takes it out and a proxy (deploy/nginx/campus.conf) takes the other processes back first; then it stops accepting. Longer than the proxy's `fail_timeout`; a second signal ends the wait; `0`: no wait, and idle connections are closed at once.",
    ),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(10)
    .describe(
      'After the drain, how long the open connections may take to end (each after its answer; an idle one when the proxy or the 5 s keep-alive timeout closes it) before the rest are closed and `campus serve` exits.',
    ),
  // Unset: the commands print no logs (`--verbose` is LOG_LEVEL=info); `campus serve` in production logs at info.
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .optional()
    .describe(
      'JSON logs (`campus serve`: on stdout, one line per request with its request id; other commands: on stderr); `--verbose` on any command is `LOG_LEVEL=info`; secrets are never logged. Unset: no logs, except `campus serve` in production, which logs at `info`.',
    ),

  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional()
    .describe('The MongoDB (or FerretDB) to use. Unset: the embedded FerretDB in `DATA_DIR`.'),
  DATA_DIR: z.string().min(1).default('./.data').describe('Files of the embedded database.'),
  EMBEDDED_DB_PORT: port.default(27018).describe('Preferred port of the embedded database (another free one when it is taken).'),
  // How the embedded FerretDB over SQLite syncs its write-ahead log (docs/configuration.md: what
  // a crash of the process, of the database and of the machine can lose under each).
  SQLITE_SYNCHRONOUS: z
    .enum(['normal', 'full'])
    .default('normal')
    .describe(
      'How the embedded FerretDB over SQLite (write-ahead log) syncs to disk: `normal` at checkpoints, `full` at every commit (what a crash can lose under each: below the table).',
    ),
  // FerretDB's own variable name: with it, the embedded FerretDB keeps its data in this PostgreSQL
  // database instead of SQLite files in DATA_DIR (docs/operations.md, "3. Database and Redis").
  FERRETDB_POSTGRESQL_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional()
    .describe(
      'With `MONGODB_URI` unset: the embedded FerretDB keeps its data in this PostgreSQL database instead of SQLite files in `DATA_DIR` (accepted in production in place of `MONGODB_URI`). With `MONGODB_URI` set to a FerretDB of your own: the PostgreSQL database that FerretDB keeps its data in, where `campus serve` and `campus migrate` make the indexes FerretDB can use.',
    ),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional()
    .describe(
      "Redis shared by the instances: rate-limit budgets, and changes announced to the other instances at once; `/readyz` checks it. Unset: each instance counts in memory and sees others' changes within a second.",
    ),

  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .describe(
      'Comma-separated proxy addresses whose `X-Forwarded-*` headers are believed; in production they (and loopback) may also ask `/livez`, `/readyz` and `/metrics` over plain HTTP, and only they may ask `/metrics`.',
    ),

  RATE_LIMIT: rateLimitSpec.prefault('100/60').describe('Default budget of one API key, `<requests>/<seconds>`.'),
  // Budgets in front of the per-key ones, so that many keys do not multiply a budget
  // (src/http/rate-limit.ts): all the keys of one account, and every key from one client address.
  RATE_LIMIT_ACCOUNT: rateLimitSpec
    .prefault('300/60')
    .describe("Budget of all the keys of one account together, in front of each key's, `<requests>/<seconds>`."),
  RATE_LIMIT_ADDRESS: rateLimitSpec
    .prefault('6000/60')
    .describe('Budget of every key sending from one client address together, `<requests>/<seconds>`.'),
  // Which key scopes each role gets at once and which need an admin's approval (src/config/scope-policy.ts;
  // docs/decisions.md, "Key scopes by role, with approval").
  KEY_SCOPE_POLICY: scopePolicySpec.describe(
    'JSON: per role, the key scopes granted at once and those awaiting an admin\'s approval, e.g. `{"USER":{"granted":["NEIS_READ"],"approval":["STUDENT_READ"]}}`; roles left out keep the default. Unset: the default table (src/config/scope-policy.ts).',
  ),
  // Isolation of the data API (src/http/budget.ts, src/graphql/limits.ts): no request may hold
  // the process or the database past its time budget.
  DATA_TIME_BUDGET_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600000)
    .default(5000)
    .describe('Time budget of one data request (REST or GraphQL), waiting included, in milliseconds.'),
  DATA_MAX_DB_OPERATIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100000)
    .default(100)
    .describe('Database operations one data request may make.'),
  // Sized for a 2-core machine: one document and one database read at a time leave the other
  // core to logins, userinfo and health (measured: docs/limits-and-security.md).
  DATA_DB_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(1)
    .describe('Database reads of data requests at once, per process (logins, userinfo and health never wait for them).'),
  GRAPHQL_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(1).describe('GraphQL documents executing at once, per process.'),
  GRAPHQL_QUEUE: z.coerce
    .number()
    .int()
    .min(0)
    .max(100000)
    .default(32)
    .describe('GraphQL documents that may wait for a turn, per process; past it, 503.'),
  GRAPHQL_COST_PER_POINT: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000000)
    .default(1000)
    .describe('Estimated cost one rate-limit point buys on `/graphql`.'),
  // Failed API-key authentications (401) allowed per client address before it is answered 429.
  API_KEY_FAILURE_LIMIT: rateLimitSpec
    .prefault('20/60')
    .describe(
      "Failed API-key authentications per client address, `<failures>/<seconds>`; past it the address's failing requests are answered 429 instead of 401.",
    ),
  // Requests per client address to the endpoints without a key (docs/decisions.md, "Projects without a key").
  PUBLIC_RATE_LIMIT: rateLimitSpec
    .prefault('60/60')
    .describe(
      'Requests per client address to the endpoints without a key (`GET /v1/public/projects`, `GET /v1/status`), `<requests>/<seconds>`.',
    ),
  SCHOOL_TIMEZONE: z
    .string()
    .default('Asia/Seoul')
    .refine(isTimeZone, 'must be an IANA time zone such as Asia/Seoul')
    .describe('The time zone of "today" and of every calendar date (an IANA name).'),

  AUTH_URL: optionalUrl.describe(
    'Public address of the authorization server; the OAuth issuer. Unset: `http://HOST:PORT`. Required, `https://`, in production.',
  ),
  USERINFO_URL: optionalUrl.describe(
    'Public address of the userinfo server. Unset: `http://HOST:PORT`. Required, `https://`, in production.',
  ),
  BASE_URL: optionalUrl.describe(
    'Public address of the data API and the pages. Unset: `http://HOST:PORT`. Required, `https://`, in production.',
  ),
  OAUTH_JWKS: z
    .string()
    .optional()
    .describe(
      'JSON Web Key Set with the private signing keys (each with its own `kid`; RSA or P-256); the first signs, all verify. Unset: generated once and kept in the database (development only); required in production (`campus secrets generate`).',
    ),
  OAUTH_COOKIE_KEYS: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
    )
    .describe(
      'Comma-separated keys signing the login cookies (each at least 32 characters; they also seal two-step sign-in keys and webhook secrets); the first signs, all verify. Unset: generated once and kept in the database (development only); required in production.',
    ),
  // The login throttle counts failed password checks (src/oauth/throttle.ts): on one account from
  // one address (past it, that address's attempts on it are refused unchecked); on one account
  // from every address (past it, the account is soft-locked: a mailed code signs it in); from one
  // address on any accounts (past it, only failures are slowed). Past the first
  // OAUTH_LOGIN_LIMIT_ACCOUNT failures on an account from every address, each further attempt on
  // it waits OAUTH_LOGIN_DELAY_MS, doubling, at most OAUTH_LOGIN_DELAY_MAX_MS.
  OAUTH_LOGIN_LIMIT_ACCOUNT: rateLimitSpec
    .prefault('5/900')
    .describe(
      "Failed password checks on one account from one client address per window, `<failures>/<seconds>`; past it that address's attempts on the account are refused unchecked. Also the attempts on an account, from every address, before the delay starts.",
    ),
  OAUTH_LOGIN_ACCOUNT_CEILING: rateLimitSpec
    .prefault('100/3600')
    .describe(
      'Failed password checks on one account from every address together per window, `<failures>/<seconds>`; past it the account is soft-locked (a mailed code signs in).',
    ),
  OAUTH_LOGIN_LIMIT_IP: rateLimitSpec
    .prefault('50/900')
    .describe(
      'Failed password checks from one client address, on any accounts, per window, `<failures>/<seconds>`; past it only failures are slowed.',
    ),
  OAUTH_LOGIN_DELAY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60000)
    .default(500)
    .describe(
      'First delay, in milliseconds, of an attempt on an account with many recent attempts; it doubles with each attempt; `0` turns it off.',
    ),
  OAUTH_LOGIN_DELAY_MAX_MS: z.coerce.number().int().min(0).max(60000).default(10000).describe('Cap of that delay, in milliseconds.'),

  // The optional daily backup of `campus serve` (src/data/operations/backup-schedule.ts): off unless BACKUP_DIR.
  BACKUP_DIR: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('`campus serve` writes a daily backup archive here (created 0700; checked at start-up). Unset: no scheduled backup.'),
  BACKUP_TIME: dailyTime
    .default('03:00')
    .describe("When the daily backup runs, `HH:MM` in `SCHOOL_TIMEZONE`; with several instances one of them takes the day's backup."),
  BACKUP_KEEP: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(7)
    .describe('How many scheduled archives to keep; older ones are deleted after each backup.'),
  // Signs backup manifests (HMAC-SHA256), and restores only archives signed with it (src/data/operations/backup.ts).
  BACKUP_KEY: z
    .string()
    .trim()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      'At least 32 characters: signs backup manifests (HMAC-SHA256); with it, `campus restore` takes only archives signed with it, and `campus backup --encrypt` encrypts under a key derived from it. Unset: archives are unsigned.',
    ),

  // The school's name in the pages' header and on the login page (src/surfaces/web/shell.ts); the
  // demo school's by default. SCHOOL_NAME_EN is the English pages' (SCHOOL_NAME when unset).
  SCHOOL_NAME: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe("The school's name in every page's header and on the login page. Unset: the demo school's, 광주소프트웨어마이스터고등학교."),
  SCHOOL_NAME_EN: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe("The school's name on the English pages. Unset: `SCHOOL_NAME`, or Gwangju Software Meister High School when neither is set."),
  // Self-service accounts (src/oauth/self-service.ts): sign-up is open to this email domain only.
  SCHOOL_EMAIL_DOMAIN: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/, 'must be a domain name such as gsm.hs.kr')
    .default('gsm.hs.kr')
    .describe('The email domain sign-up is open to.'),
  // Mail (src/oauth/mail.ts): smtp:// or smtps:// with credentials; unset (development only):
  // each mail goes to the log (without its code) and to the loopback-only outbox page.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional()
    .describe(
      'The mail server, `smtp://` (STARTTLS required in production) or `smtps://`, with credentials, e.g. `smtps://campus:PASSWORD@smtp.school.example:465`. Unset (development only; production refuses to start): mails go to the log without their codes and to the loopback-only page `/dev/outbox`.',
    ),
  MAIL_FROM: z
    .string()
    .trim()
    .min(3)
    .optional()
    .describe('The sender of the service\'s mails. Unset: `"캠퍼스 데이터 서비스 (Campus Data Service)" <no-reply@SCHOOL_EMAIL_DOMAIN>`.'),
  // Whom the login page tells a disabled account to ask (e.g. "정보부 김선생님, it@school.kr").
  HELP_CONTACT: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Whom the login page tells a disabled account to ask, e.g. `정보부 김선생님 (it@school.kr)`. Unset: "the school\'s administrators".',
    ),
  // The fields of their own record a student edits in /console/profile (docs/accounts.md, "My profile").
  STUDENT_SELF_EDIT_FIELDS: studentFieldList
    .prefault('githubId,specialty')
    .describe(
      'The fields of their own record students edit in `/console/profile`: any of `studentNumber`, `dormitoryRoom`, `majorClubId`, `autonomousClubId`, `githubId`, `specialty`, comma-separated; empty: none.',
    ),
  // Sign-up refuses `name+tag@` sub-addresses unless this is true: one mailbox, one account.
  SIGNUP_ALLOW_SUBADDRESSES: booleanFlag
    .default(false)
    .describe('`true`: sign-up takes `name+tag@` addresses (one mailbox could then hold several accounts).'),
  // A scraper behind the proxy must send `Authorization: Bearer <METRICS_TOKEN>` (src/http/metrics.ts).
  METRICS_TOKEN: z
    .string()
    .trim()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      'At least 32 characters: a request for `/metrics` that came through the proxy is served only with `Authorization: Bearer <METRICS_TOKEN>`. Unset: never served through the proxy.',
    ),
  // Whether ADMIN and ROOT accounts need a second factor before /admin opens, and which
  // (src/auth/policy.ts, holdsStaffPrivilege); unset: required in production.
  ADMIN_MFA: z
    .enum(STAFF_SECOND_FACTORS)
    .optional()
    .describe(
      "`required`: `ADMIN` and `ROOT` accounts hold staff privilege only with a second factor, a TOTP app or a passkey (`/admin` and the staff GraphQL fields need a sign-in made with it, and their keys are judged as a USER's until one is enrolled). `passkey`: the same, and only a passkey counts (a TOTP code can be relayed by a fake login page). Unset: `required` in production, else `optional`.",
    ),
  // Whether a TEACHER's keys get STUDENT_READ (and the rest of the TEACHER row) at once only with a
  // second factor; unset: on in production (src/auth/policy.ts, keyPolicyRole).
  TEACHER_KEYS_MFA: booleanFlag
    .optional()
    .describe(
      "`true`: a `TEACHER`'s keys get `STUDENT_READ` at once only with a second factor enrolled; without, it waits for an admin's approval. Unset: `true` in production, else `false`.",
    ),

  // Webhooks (src/events/delivery.ts, docs/webhooks.md): seconds to wait after each failed
  // attempt at an event (about 27.6 hours in all); past the last, the webhook is marked failing.
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be seconds separated by commas, such as 5,300,1800')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map((s) => Math.round(Number(s) * 1000)))
    .describe(
      'Seconds to wait after each failed attempt at an event, comma-separated (the default is about 27.6 hours in all); past the last, the webhook is failing and its owner is mailed.',
    ),
  // Whether webhooks may target loopback, private and link-local addresses (metadata addresses
  // never); unset: allowed outside production only.
  WEBHOOK_ALLOW_PRIVATE: booleanFlag
    .optional()
    .describe(
      'Whether webhooks may target loopback, private and link-local addresses (cloud metadata addresses never). Unset: `true` outside production, `false` in it.',
    ),

  NEIS_BASE_URL: z.url().default('https://open.neis.go.kr/hub').describe('The NEIS Open API.'),
  NEIS_API_KEY: z
    .string()
    .optional()
    .describe('The NEIS key. Unset: the background sync stays off (NEIS answers keyless callers only samples).'),
  NEIS_OFFICE_CODE: z.string().min(1).default('F10').describe("The school's education office code at NEIS."),
  NEIS_SCHOOL_CODE: z.string().min(1).default('7380292').describe("The school's code at NEIS."),
  NEIS_SYNC_ENABLED: booleanFlag.default(true).describe('Whether the daily NEIS sync runs.'),
  NEIS_SYNC_TIME: dailyTime.default('02:00').describe('When the daily NEIS sync runs, `HH:MM`.'),
  NEIS_SYNC_TIMEZONE: z
    .string()
    .default('Asia/Seoul')
    .refine(isTimeZone, 'must be an IANA time zone such as Asia/Seoul')
    .describe('The time zone of `NEIS_SYNC_TIME` (an IANA name).'),
  NEIS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120000)
    .default(10000)
    .describe('Timeout of one NEIS request, in milliseconds (each is retried up to 3 times).'),
});

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export type Env = z.infer<typeof envSchema>;

/** The validated, frozen configuration the whole service reads. */
export interface Config {
  readonly env: Env['NODE_ENV'];
  readonly isProduction: boolean;
  readonly host: string;
  readonly port: number;
  /** How `campus serve` stops (src/main.ts): readiness off and serving on for `drainMs`, then requests in flight get `timeoutMs`. */
  readonly shutdown: { readonly drainMs: number; readonly timeoutMs: number };
  /** LOG_LEVEL; undefined when unset (each command decides: src/cli/runtime.ts `logLevelOf`). */
  readonly logLevel: Env['LOG_LEVEL'];
  readonly mongodbUri: string | undefined;
  readonly dataDir: string;
  readonly embeddedDbPort: number;
  /** SQLite's `synchronous` for the embedded FerretDB over SQLite (WAL): `normal` or `full`. */
  readonly sqliteSynchronous: Env['SQLITE_SYNCHRONOUS'];
  /** The embedded FerretDB's PostgreSQL database (FERRETDB_POSTGRESQL_URL); unset: SQLite in dataDir. */
  readonly postgresqlUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly trustedProxies: readonly string[];
  readonly rateLimit: { readonly points: number; readonly durationSeconds: number };
  /** Requests of all the keys of one account, and of every key from one client address (docs/data-api.md, "Rate limits"). */
  readonly rateLimitAggregates: {
    readonly account: { readonly points: number; readonly durationSeconds: number };
    readonly address: { readonly points: number; readonly durationSeconds: number };
  };
  /** The settings the privilege rules read (src/auth/policy.ts): the key scope table, and where a second factor is required. */
  readonly policy: PolicySettings;
  /** Isolation limits of the data API (docs/limits-and-security.md). */
  readonly dataLimits: {
    /** Wall-clock budget of one data request (REST or GraphQL), queueing and database included. */
    readonly timeBudgetMs: number;
    /** Database operations one data request may make. */
    readonly maxDbOperations: number;
    /** Database operations of data requests in flight at once, per process. */
    readonly dbConcurrency: number;
    /** GraphQL documents executing at once, per process, and how many may wait for a turn. */
    readonly graphqlConcurrency: number;
    readonly graphqlQueue: number;
    /** Estimated cost that one rate-limit point buys (a GraphQL request spends ceil(cost / this)). */
    readonly graphqlCostPerPoint: number;
    /** Failed API-key authentications per client address before 429. */
    readonly apiKeyFailures: { readonly points: number; readonly durationSeconds: number };
    /** Requests per client address to the endpoints without a key (the public project list). */
    readonly publicRequests: { readonly points: number; readonly durationSeconds: number };
  };
  readonly schoolTimeZone: string;
  /** Whom a disabled account is told to ask on the login page (HELP_CONTACT); null: the school's administrators. */
  readonly helpContact: string | null;
  readonly urls: { readonly auth: string; readonly userinfo: string; readonly base: string };
  readonly oauth: {
    readonly jwks: string | undefined;
    readonly cookieKeys: readonly string[] | undefined;
    /** The login throttle's budgets (src/oauth/throttle.ts, LoginThrottle). */
    readonly login: {
      readonly accountFromAddress: { readonly points: number; readonly durationSeconds: number };
      readonly accountCeiling: { readonly points: number; readonly durationSeconds: number };
      readonly address: { readonly points: number; readonly durationSeconds: number };
      readonly delay: { readonly firstMs: number; readonly maxMs: number };
    };
  };
  /** The optional daily backup; `dir` undefined: off. Runs at `time` in the school's time zone. */
  readonly backup: {
    readonly dir: string | undefined;
    readonly time: string;
    readonly keep: number;
  };
  /** The school's name as the Korean and the English pages write it (SCHOOL_NAME, SCHOOL_NAME_EN). */
  readonly schoolName: { readonly ko: string; readonly en: string };
  /** The email domain sign-up is open to (SCHOOL_EMAIL_DOMAIN). */
  readonly schoolEmailDomain: string;
  /** The fields of their own record a student edits in /console/profile (STUDENT_SELF_EDIT_FIELDS). */
  readonly studentSelfEditFields: readonly StudentSelfField[];
  /** BACKUP_KEY: signs backup manifests; restores require the signature when set. */
  readonly backupKey: string | undefined;
  /** Whether self-service sign-up takes `name+tag@` sub-addresses (SIGNUP_ALLOW_SUBADDRESSES). */
  readonly signupAllowSubaddresses: boolean;
  /** The bearer token a scrape through the proxy must carry (METRICS_TOKEN); unset: none is served. */
  readonly metricsToken: string | undefined;
  /** Outgoing mail; `smtpUrl` undefined: the development outbox (production refuses to start). */
  readonly mail: { readonly smtpUrl: string | undefined; readonly from: string };
  /** Webhook delivery: the wait after each failed attempt (ms), and whether private targets are allowed. */
  readonly webhooks: { readonly retryScheduleMs: readonly number[]; readonly allowPrivate: boolean };
  readonly neis: {
    readonly baseUrl: string;
    readonly apiKey: string | undefined;
    readonly officeCode: string;
    readonly schoolCode: string;
    readonly syncEnabled: boolean;
    readonly syncTime: string;
    readonly syncTimeZone: string;
    readonly timeoutMs: number;
  };
}

/** Thrown when the environment is invalid; the message lists every problem at once. */
export class ConfigError extends MisconfiguredError {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Validates the environment once; pure and synchronous so tests can call it with any map. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable means "not set", as in most shells' `VAR=` idiom.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`));
  }
  const e = parsed.data;
  const problems = productionProblems(e);
  if (problems.length > 0) throw new ConfigError(problems);

  const local = `http://${urlHost(e.HOST)}:${e.PORT}`;
  return deepFreeze({
    env: e.NODE_ENV,
    isProduction: e.NODE_ENV === 'production',
    host: e.HOST,
    port: e.PORT,
    shutdown: { drainMs: e.SHUTDOWN_DRAIN_SECONDS * 1000, timeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000 },
    logLevel: e.LOG_LEVEL,
    mongodbUri: e.MONGODB_URI,
    dataDir: e.DATA_DIR,
    embeddedDbPort: e.EMBEDDED_DB_PORT,
    sqliteSynchronous: e.SQLITE_SYNCHRONOUS,
    postgresqlUrl: e.FERRETDB_POSTGRESQL_URL,
    redisUrl: e.REDIS_URL,
    trustedProxies: e.TRUSTED_PROXIES,
    rateLimit: e.RATE_LIMIT,
    rateLimitAggregates: { account: e.RATE_LIMIT_ACCOUNT, address: e.RATE_LIMIT_ADDRESS },
    policy: {
      scopePolicy: e.KEY_SCOPE_POLICY,
      staffSecondFactor: e.ADMIN_MFA ?? (e.NODE_ENV === 'production' ? 'required' : 'optional'),
      teacherSecondFactor: e.TEACHER_KEYS_MFA ?? e.NODE_ENV === 'production',
    },
    dataLimits: {
      timeBudgetMs: e.DATA_TIME_BUDGET_MS,
      maxDbOperations: e.DATA_MAX_DB_OPERATIONS,
      dbConcurrency: e.DATA_DB_CONCURRENCY,
      graphqlConcurrency: e.GRAPHQL_CONCURRENCY,
      graphqlQueue: e.GRAPHQL_QUEUE,
      graphqlCostPerPoint: e.GRAPHQL_COST_PER_POINT,
      apiKeyFailures: e.API_KEY_FAILURE_LIMIT,
      publicRequests: e.PUBLIC_RATE_LIMIT,
    },
    schoolTimeZone: e.SCHOOL_TIMEZONE,
    helpContact: e.HELP_CONTACT ?? null,
    urls: {
      auth: stripSlash(e.AUTH_URL ?? local),
      userinfo: stripSlash(e.USERINFO_URL ?? local),
      base: stripSlash(e.BASE_URL ?? local),
    },
    oauth: {
      jwks: e.OAUTH_JWKS,
      cookieKeys: e.OAUTH_COOKIE_KEYS,
      login: {
        accountFromAddress: e.OAUTH_LOGIN_LIMIT_ACCOUNT,
        accountCeiling: e.OAUTH_LOGIN_ACCOUNT_CEILING,
        address: e.OAUTH_LOGIN_LIMIT_IP,
        delay: { firstMs: e.OAUTH_LOGIN_DELAY_MS, maxMs: Math.max(e.OAUTH_LOGIN_DELAY_MS, e.OAUTH_LOGIN_DELAY_MAX_MS) },
      },
    },
    backup: { dir: e.BACKUP_DIR, time: e.BACKUP_TIME, keep: e.BACKUP_KEEP },
    schoolName: schoolNameOf(e),
    schoolEmailDomain: e.SCHOOL_EMAIL_DOMAIN,
    studentSelfEditFields: e.STUDENT_SELF_EDIT_FIELDS,
    signupAllowSubaddresses: e.SIGNUP_ALLOW_SUBADDRESSES,
    backupKey: e.BACKUP_KEY,
    metricsToken: e.METRICS_TOKEN,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM ?? `"캠퍼스 데이터 서비스 (Campus Data Service)" <no-reply@${e.SCHOOL_EMAIL_DOMAIN}>` },
    webhooks: {
      retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE ?? e.NODE_ENV !== 'production',
    },
    neis: {
      baseUrl: stripSlash(e.NEIS_BASE_URL),
      apiKey: e.NEIS_API_KEY,
      officeCode: e.NEIS_OFFICE_CODE,
      schoolCode: e.NEIS_SCHOOL_CODE,
      syncEnabled: e.NEIS_SYNC_ENABLED,
      syncTime: e.NEIS_SYNC_TIME,
      syncTimeZone: e.NEIS_SYNC_TIMEZONE,
      timeoutMs: e.NEIS_TIMEOUT_MS,
    },
  });
}

/** Production refuses development defaults instead of running on them. */
function productionProblems(e: Env): string[] {
  if (e.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!e.MONGODB_URI && !e.FERRETDB_POSTGRESQL_URL) {
    problems.push('MONGODB_URI: required in production (the embedded database is for development), unless FERRETDB_POSTGRESQL_URL is set');
  }
  for (const name of ['AUTH_URL', 'USERINFO_URL', 'BASE_URL'] as const) {
    const value = e[name];
    if (!value) problems.push(`${name}: required in production`);
    else if (!value.startsWith('https://')) problems.push(`${name}: must be an https:// address in production`);
  }
  if (!e.OAUTH_JWKS) problems.push('OAUTH_JWKS: required in production (a JSON Web Key Set with private keys and kid)');
  if (!e.OAUTH_COOKIE_KEYS?.length) problems.push('OAUTH_COOKIE_KEYS: required in production (comma-separated random strings)');
  else if (e.OAUTH_COOKIE_KEYS.some((k) => k.length < 32)) problems.push('OAUTH_COOKIE_KEYS: each key must be at least 32 characters');
  if (!e.SMTP_URL) problems.push('SMTP_URL: required in production (sign-up and password-reset codes are sent by email)');
  return problems;
}

/** The demo school's names (the defaults, src/data/school/demo.ts), else SCHOOL_NAME in both languages unless SCHOOL_NAME_EN. */
function schoolNameOf(e: Env): { ko: string; en: string } {
  if (!e.SCHOOL_NAME && !e.SCHOOL_NAME_EN) return { ko: DEMO_SCHOOL_NAME.ko, en: DEMO_SCHOOL_NAME.en };
  const ko = e.SCHOOL_NAME ?? e.SCHOOL_NAME_EN ?? '';
  return { ko, en: e.SCHOOL_NAME_EN ?? ko };
}

/** The school the demo data describes (its email domain is SCHOOL_EMAIL_DOMAIN's default). */
export const DEMO_SCHOOL_NAME = { ko: '광주소프트웨어마이스터고등학교', en: 'Gwangju Software Meister High School' } as const;

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
