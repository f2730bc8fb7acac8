/**
 * The one table of login scopes (docs/decisions.md, "Login scopes"): each scope's name, the
 * userinfo fields it releases, and its words in Korean and English. The provider's configuration
 * (src/oauth/provider.ts), userinfo (src/oauth/userinfo.ts), the consent page, the developer
 * console's app form, /console/connected and discovery's `scopes_supported` all read it, so a scope
 * is described the same way everywhere and releases exactly what the consent page listed.
 */

import { AccountRole, ClubType, ProjectStatus } from '../data/__generated__/enums.js';

/** A field of the userinfo answer, in words. */
export interface FieldWords {
  /** The key in the userinfo answer (or in the record under it). */
  readonly key: string;
  readonly ko: string;
  readonly en: string;
}

/** One login scope. */
export interface LoginScope {
  readonly name: string;
  /** The top-level userinfo keys it releases (`sub` is always there). */
  readonly fields: readonly UserinfoKey[];
  readonly title: { readonly ko: string; readonly en: string };
  /** What the consent page lists: every field the app receives, nested records' fields included. */
  readonly shown: readonly FieldWords[];
  /**
   * An OpenID Connect standard scope (Core 1.0, section 5.4): its fields are standard claims, so
   * the ID token carries them too (src/oauth/provider.ts), and libraries that ask for it by
   * default read them where they expect them.
   */
  readonly standard?: true;
}

/** The account's own fields (account:read). */
export const ACCOUNT_FIELDS: readonly FieldWords[] = [
  { key: 'id', ko: '계정 번호', en: 'account number' },
  { key: 'email', ko: '이메일', en: 'email' },
  { key: 'role', ko: '계정 역할', en: 'account role' },
  { key: 'isStudent', ko: '학생인지 여부', en: 'whether you are a student' },
];

/** The student record userinfo shows (the fields of GET /v1/students). */
export const STUDENT_FIELDS: readonly FieldWords[] = [
  { key: 'id', ko: '학생 번호', en: 'student id' },
  { key: 'name', ko: '이름', en: 'name' },
  { key: 'sex', ko: '성별', en: 'sex' },
  { key: 'email', ko: '학교 이메일', en: 'school email' },
  { key: 'grade', ko: '학년', en: 'grade' },
  { key: 'classNum', ko: '반', en: 'class' },
  { key: 'number', ko: '번호', en: 'number' },
  { key: 'studentNumber', ko: '학번', en: 'student number' },
  { key: 'major', ko: '학과', en: 'major' },
  { key: 'role', ko: '학생 역할', en: 'student role' },
  { key: 'dormitoryFloor', ko: '기숙사 층', en: 'dormitory floor' },
  { key: 'dormitoryRoom', ko: '기숙사 호실', en: 'dormitory room' },
  { key: 'majorClub', ko: '전공 동아리', en: 'major club' },
  { key: 'autonomousClub', ko: '자율 동아리', en: 'autonomous club' },
  { key: 'specialty', ko: '특기', en: 'specialty' },
  { key: 'githubId', ko: 'GitHub 아이디', en: 'GitHub id' },
  { key: 'githubUrl', ko: 'GitHub 주소', en: 'GitHub address' },
];

/** A teacher's record (student:read for a teacher). */
export const TEACHER_FIELDS: readonly FieldWords[] = [
  { key: 'name', ko: '교사 이름', en: "teacher's name" },
  { key: 'department', ko: '부서', en: 'department' },
];

/** A club or project in the person's list. */
export const CLUB_FIELDS: readonly FieldWords[] = [
  { key: 'id', ko: '동아리 번호', en: 'club id' },
  { key: 'name', ko: '동아리 이름', en: 'club name' },
  { key: 'type', ko: '동아리 종류', en: 'club type' },
];
export const PROJECT_FIELDS: readonly FieldWords[] = [
  { key: 'id', ko: '프로젝트 번호', en: 'project id' },
  { key: 'name', ko: '프로젝트 이름', en: 'project name' },
  { key: 'status', ko: '프로젝트 상태', en: 'project status' },
];

/** A nested record's fields, keyed `record.field` (the consent page marks each with its key). */
const labelled = (record: string, prefix: { ko: string; en: string }, fields: readonly FieldWords[]): FieldWords[] =>
  fields.map((f) => ({ key: `${record}.${f.key}`, ko: `${prefix.ko} ${f.ko}`, en: `${prefix.en} ${f.en}` }));

/** Every answer carries the account's identifier, whatever the scopes. */
export const SUB_FIELD: FieldWords = { key: 'sub', ko: '계정 식별자 (sub)', en: 'account identifier (sub)' };

/** A JSON Schema (2020-12) of a value of the userinfo answer. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * Where a schema below stands for the student record GET /v1/students shows: the generated client
 * types it as that endpoint's record, and the tests put the OpenAPI document's schema of it there.
 */
export const STUDENT_RECORD_REF = '#/$defs/Student';

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
/** An object with exactly these fields, every one always there (null when it has no value). */
const record = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const INTEGER = { type: 'integer' };
const TEXT = { type: 'string' };

/**
 * Every top-level key of the userinfo answer, in the answer's order (src/oauth/userinfo.ts builds
 * it), with the JSON Schema of its value. A scope's `fields` name only these keys. The TypeScript
 * client's `Userinfo` type is generated from this table and the scopes' fields
 * (scripts/client-types.ts: `npm run codegen`; `npm run codegen:check` fails when it is stale),
 * and test/apps/login-scopes.http.test.ts checks real answers against it.
 */
export const USERINFO_FIELDS = {
  sub: { ...TEXT, description: 'The account identifier (the ID token names the same `sub`); always there.' },
  id: { ...INTEGER, description: 'The account number.' },
  email: { ...TEXT, description: "The account's email." },
  role: { enum: Object.values(AccountRole), description: "The account's role: TEACHER for an approved teacher." },
  isStudent: { type: 'boolean', description: "Whether a student record has the account's email." },
  student: {
    ...nullable({ $ref: STUDENT_RECORD_REF }),
    description: "The student record with the account's email, as GET /v1/students shows it; null for anyone else.",
  },
  teacher: {
    ...nullable(record({ name: nullable(TEXT), department: nullable(TEXT) })),
    description: "A teacher's record (name, department); null for anyone else.",
  },
  clubs: {
    type: 'array',
    items: record({ id: INTEGER, name: TEXT, type: { enum: Object.values(ClubType) } }),
    description: "The person's clubs (their major and autonomous club).",
  },
  projects: {
    type: 'array',
    items: record({ id: INTEGER, name: TEXT, status: { enum: Object.values(ProjectStatus) } }),
    description: 'The projects the person takes part in.',
  },
  email_verified: {
    type: 'boolean',
    description: 'Whether the email was proven: always true (a sign-up proves it with a mailed code; an operator makes the others).',
  },
  name: {
    ...nullable(TEXT),
    description: "The person's name: the student record's, or a teacher's; null when the school has none.",
  },
  preferred_username: { ...TEXT, description: "The account's email before the @ (a short name; not unique across schools)." },
} satisfies Record<string, JsonSchema>;

/** A top-level key of the userinfo answer. */
export type UserinfoKey = keyof typeof USERINFO_FIELDS;

const STUDENT_RECORD = { ko: '학생 기록:', en: 'student record:' };
const TEACHER_RECORD = { ko: '교사 기록:', en: 'teacher record:' };

export const SELF_READ = 'self:read';
export const OPENID = 'openid';
export const ACCOUNT_READ = 'account:read';
export const STUDENT_READ = 'student:read';
export const CLUB_READ = 'club:read';
export const PROJECT_READ = 'project:read';
export const PROFILE = 'profile';
export const EMAIL = 'email';

/** Every login scope, in the order pages list them. */
export const LOGIN_SCOPES: readonly LoginScope[] = [
  {
    name: ACCOUNT_READ,
    fields: ['id', 'email', 'role', 'isStudent'],
    title: { ko: '내 계정 정보 읽기', en: 'Read your account' },
    shown: ACCOUNT_FIELDS,
  },
  {
    name: STUDENT_READ,
    fields: ['student', 'teacher'],
    title: { ko: '내 학생 기록(교사는 교사 기록) 읽기', en: 'Read your student record (a teacher’s: the teacher record)' },
    shown: [...labelled('student', STUDENT_RECORD, STUDENT_FIELDS), ...labelled('teacher', TEACHER_RECORD, TEACHER_FIELDS)],
  },
  {
    name: CLUB_READ,
    fields: ['clubs'],
    title: { ko: '내 동아리 읽기', en: 'Read your clubs' },
    shown: labelled('clubs', { ko: '내 동아리:', en: 'your clubs:' }, CLUB_FIELDS),
  },
  {
    name: PROJECT_READ,
    fields: ['projects'],
    title: { ko: '내 프로젝트 읽기', en: 'Read your projects' },
    shown: labelled('projects', { ko: '내 프로젝트:', en: 'your projects:' }, PROJECT_FIELDS),
  },
  {
    name: SELF_READ,
    fields: ['id', 'email', 'role', 'isStudent', 'student', 'teacher'],
    title: { ko: '내 학생 정보 읽기 (계정과 학생 기록)', en: 'Read your own student record and account' },
    shown: [
      ...ACCOUNT_FIELDS,
      ...labelled('student', STUDENT_RECORD, STUDENT_FIELDS),
      ...labelled('teacher', TEACHER_RECORD, TEACHER_FIELDS),
    ],
  },
  {
    name: PROFILE,
    fields: ['name', 'preferred_username'],
    title: { ko: '내 이름 읽기 (profile)', en: 'Read your name (profile)' },
    shown: [
      { key: 'name', ko: '이름', en: 'name' },
      { key: 'preferred_username', ko: '사용자 이름 (이메일의 @ 앞부분)', en: 'user name (the email before the @)' },
    ],
    standard: true,
  },
  {
    name: EMAIL,
    fields: ['email', 'email_verified'],
    title: { ko: '내 이메일 읽기 (email)', en: 'Read your email (email)' },
    shown: [
      { key: 'email', ko: '이메일', en: 'email' },
      { key: 'email_verified', ko: '이메일 확인 여부', en: 'whether the email is verified' },
    ],
    standard: true,
  },
  {
    name: OPENID,
    fields: [],
    title: { ko: '로그인 확인 (ID 토큰)', en: 'Confirm who you are (an ID token)' },
    shown: [SUB_FIELD],
  },
];

/** Every scope a client may be allowed (discovery's scopes_supported). */
export const OAUTH_SCOPES: readonly string[] = LOGIN_SCOPES.map((s) => s.name);
export type OAuthScope = string;

/** The scopes of the userinfo resource (every one but openid, which oidc-provider handles). */
export const RESOURCE_SCOPES: readonly string[] = OAUTH_SCOPES.filter((s) => s !== OPENID);

/**
 * The standard scopes and the claims each puts in the ID token as well as in userinfo
 * (oidc-provider's `claims`: `openid` gives `sub`).
 */
export const ID_TOKEN_CLAIMS: Readonly<Record<string, readonly string[]>> = Object.fromEntries([
  [OPENID, ['sub']],
  ...LOGIN_SCOPES.filter((s) => s.standard).map((s) => [s.name, s.fields]),
]);

/** The scope's row, or undefined for an unknown name. */
export function loginScope(name: string): LoginScope | undefined {
  return LOGIN_SCOPES.find((s) => s.name === name);
}

/** The scope's title in a language (the name itself for an unknown scope). */
export function scopeTitle(name: string, lang: 'ko' | 'en'): string {
  return loginScope(name)?.title[lang] ?? name;
}

/** Every scope's title in a language, by name (the text catalogues' scope words). */
export function scopeTitles(lang: 'ko' | 'en'): Record<string, string> {
  return Object.fromEntries(LOGIN_SCOPES.map((s) => [s.name, s.title[lang]]));
}

/** The top-level userinfo keys a set of scopes releases (always `sub`). */
export function releasedFields(scopes: Iterable<string>): Set<string> {
  const fields = new Set<string>(['sub']);
  for (const scope of scopes) for (const field of loginScope(scope)?.fields ?? []) fields.add(field);
  return fields;
}

/**
 * The scopes that let an app read more than who signed in: a developer-console app asking for any
 * of them is in testing until an admin approves it (src/oauth/apps.ts).
 */
export const SCOPES_NEEDING_APPROVAL: readonly string[] = [STUDENT_READ, SELF_READ, CLUB_READ, PROJECT_READ];
