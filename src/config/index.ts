import { z } from 'zod';

/**
 * Every environment variable the service reads, with its default. This is the one place
 * defaults live; README.md lists the same variables.
 */
const booleanFlag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => v === 'true' || v === 'false', 'must be true or false')
  .transform((v) => v === 'true');

const port = z.coerce.number().int().min(0).max(65535);

const rateLimitSpec = z
  .string()
  .regex(/^\d+\/\d+$/, 'must look like <requests>/<seconds>, e.g. 100/60')
  .transform((v) => {
    const [points, seconds] = v.split('/').map(Number);
    return { points: points ?? 0, durationSeconds: seconds ?? 0 };
  })
  .refine((r) => r.points >= 1 && r.durationSeconds >= 1, 'requests and seconds must both be at least 1');

const optionalUrl = z.url().optional();

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  MONGODB_URI: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://').optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  EMBEDDED_DB_PORT: port.default(27018),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').optional(),

  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),

  RATE_LIMIT: rateLimitSpec.prefault('100/60'),
  SCHOOL_TIMEZONE: z
    .string()
    .default('Asia/Seoul')
    .refine(isTimeZone, 'must be an IANA time zone such as Asia/Seoul'),

  AUTH_URL: optionalUrl,
  USERINFO_URL: optionalUrl,
  BASE_URL: optionalUrl,
  OAUTH_JWKS: z.string().optional(),
  OAUTH_COOKIE_KEYS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined)),
  // Failed logins allowed per account and per client address before the login page says "wait".
  OAUTH_LOGIN_LIMIT_ACCOUNT: rateLimitSpec.prefault('5/900'),
  OAUTH_LOGIN_LIMIT_IP: rateLimitSpec.prefault('50/900'),

  NEIS_BASE_URL: z.url().default('https://open.neis.go.kr/hub'),
  NEIS_API_KEY: z.string().optional(),
  NEIS_OFFICE_CODE: z.string().min(1).default('F10'),
  NEIS_SCHOOL_CODE: z.string().min(1).default('7380292'),
  NEIS_SYNC_ENABLED: booleanFlag.default(true),
  NEIS_SYNC_TIME: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM in 24-hour time')
    .default('02:00'),
  NEIS_SYNC_TIMEZONE: z
    .string()
    .default('Asia/Seoul')
    .refine(isTimeZone, 'must be an IANA time zone such as Asia/Seoul'),
  NEIS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120000).default(10000),
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
  readonly logLevel: Env['LOG_LEVEL'];
  readonly mongodbUri: string | undefined;
  readonly dataDir: string;
  readonly embeddedDbPort: number;
  readonly redisUrl: string | undefined;
  readonly trustedProxies: readonly string[];
  readonly rateLimit: { readonly points: number; readonly durationSeconds: number };
  readonly schoolTimeZone: string;
  readonly urls: { readonly auth: string; readonly userinfo: string; readonly base: string };
  readonly oauth: {
    readonly jwks: string | undefined;
    readonly cookieKeys: readonly string[] | undefined;
    readonly loginLimitAccount: { readonly points: number; readonly durationSeconds: number };
    readonly loginLimitIp: { readonly points: number; readonly durationSeconds: number };
  };
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
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
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
    logLevel: e.LOG_LEVEL,
    mongodbUri: e.MONGODB_URI,
    dataDir: e.DATA_DIR,
    embeddedDbPort: e.EMBEDDED_DB_PORT,
    redisUrl: e.REDIS_URL,
    trustedProxies: e.TRUSTED_PROXIES,
    rateLimit: e.RATE_LIMIT,
    schoolTimeZone: e.SCHOOL_TIMEZONE,
    urls: {
      auth: stripSlash(e.AUTH_URL ?? local),
      userinfo: stripSlash(e.USERINFO_URL ?? local),
      base: stripSlash(e.BASE_URL ?? local),
    },
    oauth: {
      jwks: e.OAUTH_JWKS,
      cookieKeys: e.OAUTH_COOKIE_KEYS,
      loginLimitAccount: e.OAUTH_LOGIN_LIMIT_ACCOUNT,
      loginLimitIp: e.OAUTH_LOGIN_LIMIT_IP,
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
  if (!e.MONGODB_URI) problems.push('MONGODB_URI: required in production (the embedded database is for development)');
  for (const name of ['AUTH_URL', 'USERINFO_URL', 'BASE_URL'] as const) {
    const value = e[name];
    if (!value) problems.push(`${name}: required in production`);
    else if (!value.startsWith('https://')) problems.push(`${name}: must be an https:// address in production`);
  }
  if (!e.OAUTH_JWKS) problems.push('OAUTH_JWKS: required in production (a JSON Web Key Set with private keys and kid)');
  if (!e.OAUTH_COOKIE_KEYS?.length) problems.push('OAUTH_COOKIE_KEYS: required in production (comma-separated random strings)');
  else if (e.OAUTH_COOKIE_KEYS.some((k) => k.length < 32)) problems.push('OAUTH_COOKIE_KEYS: each key must be at least 32 characters');
  return problems;
}

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
