import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Collection } from 'mongodb';
import type { Database } from './database.js';
import { hashStoredCredentials, moveClaimsToRecords } from './accounts/oauth-records.js';
import { MisconfiguredError } from '../errors/index.js';
import { isDuplicateKey } from './platform/errors.js';
import { AccessAudit, type AccessActor } from './accounts/access-log.js';

const MIGRATION_ACTOR: AccessActor = { kind: 'MIGRATION' };

/**
 * Schema migrations. The database records the version it is at (`meta` document `schema`); each
 * start-up (and each `campus` command that writes) brings it to the version of this code under a
 * lock, so that when several instances start at once one migrates and the others wait. Every
 * migration is idempotent: one interrupted half-way is simply run again. A brand-new database
 * (nothing written yet) skips the history: it is created at the current version in one step.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Database): Promise<void>;
}

/** In order; a new migration goes at the end with the next version number. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'create the indexes of every collection',
    up: (db) => db.ensureIndexes(),
  },
  {
    version: 2,
    name: 'keep authorization codes and refresh tokens only as hashes',
    up: hashStoredCredentials,
  },
  {
    version: 3,
    name: 'one data-version document per kind (the shared one is retired)',
    // src/data/platform/versions.ts: the kinds shared one document, where FerretDB's unisolated updates
    // could return one kind to an old value. Its successors need no seeding: a missing one reads 0
    // and the first bump creates it. The schema version also keeps older processes, which still
    // bump the retired document, from running beside this code unnoticed.
    up: async (db) => {
      await db.connection.collection('meta').deleteOne({ _id: 'versions' } as never);
    },
  },
  {
    version: 4,
    name: 'claims of codes and refresh tokens move beside them (oauth_records)',
    // A refresh then writes the used token's claim and its successor in one insert
    // (src/data/accounts/oauth-records.ts, rotate); oauth_claims is dropped.
    up: moveClaimsToRecords,
  },
  {
    version: 5,
    name: 'apps registered in the developer console before the app registry count as approved',
    // A developer-console app asking for more than the account is in testing until an admin
    // approves it (docs/decisions.md, "Apps that ask for more than their owner wait for approval").
    // Apps already in use when that rule came are approved as of their registration (approvedBy
    // null), so no app in use stops; /admin/apps lists them for review.
    up: async (db) => {
      const apps = await db.models.oauthClients
        .find({ ownerAccountId: { $ne: null }, approvedAt: null }, { _id: 1, createdAt: 1 })
        .lean<{ _id: string; createdAt: Date }[]>();
      for (const app of apps) {
        await db.models.oauthClients.updateOne(
          { _id: app._id, approvedAt: null },
          { $set: { approvedAt: app.createdAt, approvedBy: null } },
        );
      }
      if (apps.length > 0) await db.versions.bump('oauth');
    },
  },
  {
    version: 6,
    name: 'accounts approved as teachers become TEACHER (those a ROOT made ADMIN since stay ADMIN)',
    up: teachersAreTeachers,
  },
  {
    version: 7,
    name: 'API keys keep what they asked for; their scopes are worked out at each use',
    up: keysKeepWhatTheyAsked,
  },
];

/**
 * Before TEACHER existed, approving a teacher's sign-up made the account ADMIN (docs/decisions.md,
 * "A teacher is not an administrator"). An account approved as a teacher (approval APPROVED) whose
 * role is ADMIN and whose record has not changed since the decision (updatedAt equals
 * approvalDecidedAt: the decision wrote both) became ADMIN by the approval alone: it becomes
 * TEACHER. One changed since keeps ADMIN: a ROOT could have made it ADMIN deliberately only by
 * changing its role after the approval (taking ADMIN away and giving it back), which moves
 * updatedAt; a password change moves it too and cannot be told apart, so such an account is kept
 * ADMIN (a deliberate grant is never taken away) and listed for a ROOT to review. Both are written
 * to the access log (actor MIGRATION).
 */
async function teachersAreTeachers(db: Database): Promise<void> {
  const approved = await db.models.accounts
    .find({ approval: 'APPROVED', role: 'ADMIN' })
    .lean<{ _id: number; email: string; updatedAt: Date; approvalDecidedAt: Date | null }[]>();
  const audit = new AccessAudit(db);
  let changed = 0;
  for (const account of approved) {
    const untouched = account.approvalDecidedAt != null && account.updatedAt.getTime() === account.approvalDecidedAt.getTime();
    const target = { kind: 'ACCOUNT' as const, id: String(account._id), label: account.email };
    if (!untouched) {
      await audit.record(MIGRATION_ACTOR, {
        action: 'ROLE_CHANGED',
        target,
        detail: {
          from: 'ADMIN',
          to: 'ADMIN',
          kept: true,
          reason: 'changed since the teacher approval: review whether it should be TEACHER',
        },
      });
      continue;
    }
    // The same condition again: an account changed meanwhile is left alone.
    const result = await db.models.accounts.updateOne(
      { _id: account._id, role: 'ADMIN', approval: 'APPROVED', updatedAt: account.updatedAt },
      { $set: { role: 'TEACHER' } },
    );
    if (result.matchedCount !== 1) continue;
    changed++;
    await audit.record(MIGRATION_ACTOR, {
      action: 'ROLE_CHANGED',
      target,
      detail: { from: 'ADMIN', to: 'TEACHER', reason: 'approved as a teacher' },
    });
  }
  if (changed > 0) await db.versions.bump('oauth');
}

/**
 * An owned key's scopes are now what it asked for (`scopes`), as far as its owner's role grants
 * them now or an admin approved them (src/auth/policy.ts, keyScopes). Before, `scopes` held what
 * was granted when the key was made or approved, beside `pendingScopes`. Each key's request
 * becomes everything it asked for; a key an admin decided on keeps what it held then as
 * approved (the admin saw the key and its scopes), one never decided keeps nothing approved, so
 * its scopes follow its owner's role from now on. Idempotent: a key without `pendingScopes` is done.
 */
async function keysKeepWhatTheyAsked(db: Database): Promise<void> {
  const keys = db.connection.collection<{
    _id: unknown;
    scopes: string[];
    pendingScopes?: string[];
    refusedScopes?: string[];
    decidedAt?: Date | null;
    ownerAccountId?: number | null;
  }>('api_keys');
  const found = await keys.find({ pendingScopes: { $exists: true } }).toArray();
  for (const key of found) {
    const requested = [...new Set([...key.scopes, ...(key.pendingScopes ?? []), ...(key.refusedScopes ?? [])])];
    const approved = key.ownerAccountId != null && key.decidedAt ? key.scopes : [];
    await keys.updateOne({ _id: key._id, pendingScopes: { $exists: true } } as never, {
      $set: { scopes: requested, approvedScopes: approved },
      $unset: { pendingScopes: '' },
    });
  }
  if (found.length > 0) await db.versions.bump('keys');
}

/** The schema version this code reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The ids of the schema document and of the migration lock in `meta` (a restore drops the lock). */
export const SCHEMA_ID = 'schema';
export const LOCK_ID = 'migration-lock';

/** The database was migrated by newer code than this: it must not start against it. */
export class SchemaTooNewError extends MisconfiguredError {}

/** Where a database stands, for `campus migrate --status`. */
export interface SchemaStatus {
  readonly databaseVersion: number;
  readonly codeVersion: number;
  readonly pending: readonly { version: number; name: string }[];
  readonly history: readonly MigrationRecord[];
}

/** One applied migration, as kept in the schema document. */
export interface MigrationRecord {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: Date;
  readonly by: string;
}

interface SchemaDoc {
  _id: string;
  version: number;
  history?: MigrationRecord[];
}

interface LockDoc {
  _id: string;
  owner: string;
  expiresAt: Date;
}

export interface MigrateOptions {
  readonly progress?: (line: string) => void;
  /** How long a lock is honoured without a heartbeat (a crashed migrator's lock then lapses). */
  readonly lockTtlMs?: number;
  /** How often a waiting instance looks again. */
  readonly pollMs?: number;
  /** Who migrates, for the history and the lock (host, pid and a random tag by default). */
  readonly owner?: string;
}

/** Reads the schema version and what this code would apply. */
export async function schemaStatus(db: Database): Promise<SchemaStatus> {
  const doc = await schemaDoc(db);
  const databaseVersion = doc?.version ?? 0;
  return {
    databaseVersion,
    codeVersion: SCHEMA_VERSION,
    pending: MIGRATIONS.filter((m) => m.version > databaseVersion).map(({ version, name }) => ({ version, name })),
    history: doc?.history ?? [],
  };
}

/**
 * Brings the database to SCHEMA_VERSION. Returns the migrations this call applied (none when
 * the database was current or another instance migrated it meanwhile; for a brand-new database,
 * the one record of its creation at SCHEMA_VERSION). Refuses a database newer than the code.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrationRecord[]> {
  const progress = options.progress ?? (() => {});
  const lockTtlMs = options.lockTtlMs ?? 60_000;
  const pollMs = options.pollMs ?? 250;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  for (let waited = false; ; waited = true) {
    const version = checkVersion((await schemaDoc(db))?.version ?? 0);
    if (version === SCHEMA_VERSION) return [];
    if (await takeLock(meta(db), owner, lockTtlMs)) {
      try {
        return await applyPending(db, owner, lockTtlMs, progress);
      } finally {
        await meta(db).deleteOne({ _id: LOCK_ID, owner } as never);
      }
    }
    if (!waited) progress(`another instance is migrating the database (schema ${version} -> ${SCHEMA_VERSION}); waiting`);
    await new Promise((done) => setTimeout(done, pollMs));
  }
}

async function applyPending(db: Database, owner: string, lockTtlMs: number, progress: (line: string) => void): Promise<MigrationRecord[]> {
  // Read again under the lock: the previous holder may have finished just before we took it.
  const from = checkVersion((await schemaDoc(db))?.version ?? 0);
  if (from === 0 && (await isBrandNew(db))) return [await createAtCurrentSchema(db, owner, progress)];
  const applied: MigrationRecord[] = [];
  const heartbeat = setInterval(
    () => {
      void meta(db).updateOne({ _id: LOCK_ID, owner } as never, { $set: { expiresAt: new Date(Date.now() + lockTtlMs) } });
    },
    Math.max(1000, lockTtlMs / 3),
  );
  try {
    for (const migration of MIGRATIONS.filter((m) => m.version > from)) {
      progress(`migrating the database to schema ${migration.version}: ${migration.name}`);
      await migration.up(db);
      const record: MigrationRecord = { version: migration.version, name: migration.name, appliedAt: new Date(), by: owner };
      await meta(db).updateOne({ _id: SCHEMA_ID } as never, { $set: { version: migration.version }, $push: { history: record } } as never, {
        upsert: true,
      });
      applied.push(record);
    }
  } finally {
    clearInterval(heartbeat);
  }
  return applied;
}

/** What the history records for a database created at the current schema (createAtCurrentSchema). */
export const NEW_DATABASE = 'a new database, created at this schema (the indexes of every collection)';

/**
 * A database nothing was written to yet: no schema document (the caller saw version 0) and no
 * document in any collection but the migration lock this instance holds. Collections without
 * documents do not count: FerretDB and `ensureIndexes` make them before anything is written.
 */
async function isBrandNew(db: Database): Promise<boolean> {
  for (const { name } of await db.client.db().listCollections({}, { nameOnly: true }).toArray()) {
    if (name.startsWith('system.')) continue;
    const filter = name === 'meta' ? { _id: { $ne: LOCK_ID } } : {};
    if (
      await db.client
        .db()
        .collection(name)
        .findOne(filter as never, { projection: { _id: 1 } })
    )
      return false;
  }
  return true;
}

/**
 * A brand-new database needs none of the migrations' history, only what they leave behind for an
 * empty one: the indexes (migration 1; every later one rewrites stored data, of which there is
 * none). It is created at SCHEMA_VERSION in one step, recorded as one history entry. A later
 * migration that an empty database needs too must add its work here.
 */
async function createAtCurrentSchema(db: Database, owner: string, progress: (line: string) => void): Promise<MigrationRecord> {
  await db.ensureIndexes();
  const record: MigrationRecord = { version: SCHEMA_VERSION, name: NEW_DATABASE, appliedAt: new Date(), by: owner };
  await meta(db).updateOne({ _id: SCHEMA_ID } as never, { $set: { version: SCHEMA_VERSION }, $push: { history: record } } as never, {
    upsert: true,
  });
  progress(`created the database at schema ${SCHEMA_VERSION}`);
  return record;
}

function checkVersion(version: number): number {
  if (version > SCHEMA_VERSION) {
    throw new SchemaTooNewError(
      `The database is at schema version ${version}, newer than this code (${SCHEMA_VERSION}): run the newer release, or restore a backup taken before the upgrade.`,
    );
  }
  return version;
}

/**
 * The lock is a document with a fixed id: inserting it succeeds for exactly one instance on
 * every MongoDB-compatible server (a duplicate key refuses the others). A lock whose holder
 * stopped renewing it is removed, compare-and-delete on its expiry, and taken on the next try.
 */
async function takeLock(collection: Collection<LockDoc>, owner: string, ttlMs: number): Promise<boolean> {
  try {
    await collection.insertOne({ _id: LOCK_ID, owner, expiresAt: new Date(Date.now() + ttlMs) });
    return true;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const held = await collection.findOne({ _id: LOCK_ID });
  if (held && held.expiresAt.getTime() < Date.now()) {
    await collection.deleteOne({ _id: LOCK_ID, owner: held.owner, expiresAt: held.expiresAt });
  }
  return false;
}

function schemaDoc(db: Database): Promise<SchemaDoc | null> {
  return meta(db).findOne({ _id: SCHEMA_ID }) as Promise<SchemaDoc | null>;
}

function meta(db: Database): Collection<LockDoc> {
  return db.client.db().collection<LockDoc>('meta');
}
