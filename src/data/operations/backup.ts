import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, type DecipherGCM } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { BSON, type Db, type Document } from 'mongodb';
import type { Database } from '../database.js';
import { LOCK_ID, SCHEMA_ID, SCHEMA_VERSION } from '../migrations.js';
import { BadRequestError, ServiceUnavailableError } from '../../errors/index.js';
import { sameSecret } from '../../compare.js';
import { counted } from '../../plural.js';

/**
 * Backup archives: one gzip file of JSON lines, written and read through the MongoDB driver so
 * the same command works on the embedded FerretDB, FerretDB on PostgreSQL and MongoDB.
 *
 *   {"format":"campus-data-service-backup","version":1,"createdAt":...}    the header
 *   {"collection":"students"}                                              a section header
 *   <one canonical Extended JSON document per line>                        its documents
 *   {"manifest":{"collections":[{name,count,sha256}],"sha256":...}}       the last line
 *
 * Canonical Extended JSON keeps every BSON type (dates, ObjectIds, 64-bit numbers) exact. Each
 * section's sha256 covers its document lines; the manifest's covers every line before it, so a
 * truncated or damaged archive is refused before anything is written. A checksum anyone can
 * recompute does not stop an edit, though: with BACKUP_KEY the manifest also carries
 * `signature`, an HMAC-SHA256 under that key of the checksum and the sections, and a restore
 * with BACKUP_KEY refuses an archive without a valid one.
 *
 * Encrypted (`campus backup --encrypt`), the gzip file is sealed with AES-256-GCM under a key
 * derived from BACKUP_KEY (HKDF-SHA256 with a random salt per archive):
 *
 *   CAMPUSE1 | salt (16 bytes) | IV (12 bytes) | ciphertext | GCM tag (16 bytes)
 *
 * the first 36 bytes authenticated too. A reader checks the tag over the whole file before it
 * reads a line, so a wrong key or an altered byte is refused before anything is parsed.
 */
export const BACKUP_FORMAT = 'campus-data-service-backup';
export const BACKUP_FORMAT_VERSION = 1;

/** Collections written while restoring; renamed over the real ones only when all are complete. */
const STAGING_PREFIX = 'restore_staging__';
const INSERT_BATCH = 1000;
/** A backup is taken again when the data or keys changed while it was read (at most this often). */
const CONSISTENCY_ATTEMPTS = 3;

/** Something is wrong with an archive or with the database it would replace; nothing was changed. */
export class BackupError extends BadRequestError {}

/** The database failed while the staged collections replaced the live ones: run the restore again. */
export class RestoreInterruptedError extends ServiceUnavailableError {}

export interface CollectionSummary {
  readonly name: string;
  readonly count: number;
  readonly sha256: string;
}

export interface BackupSummary {
  readonly file: string;
  readonly createdAt: string;
  readonly collections: readonly CollectionSummary[];
  readonly documents: number;
  /** The manifest carries a BACKUP_KEY signature. */
  readonly signed: boolean;
  /** The archive is encrypted under BACKUP_KEY. */
  readonly encrypted: boolean;
}

export type Progress = (line: string) => void;

/** BACKUP_KEY: signs the manifests written, and is required of the archives read; with `encrypt`, also encrypts. */
export interface BackupSigning {
  readonly key: string | undefined;
  /** Encrypt the archive written (needs `key`); archives read are decrypted whenever they are encrypted. */
  readonly encrypt?: boolean;
}

const ENCRYPTED_MAGIC = Buffer.from('CAMPUSE1');
const SALT_BYTES = 16;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ENCRYPTED_HEADER_BYTES = ENCRYPTED_MAGIC.length + SALT_BYTES + IV_BYTES;

/** The AES-256 key of one archive: BACKUP_KEY through HKDF with the archive's salt (never the signing key itself). */
function encryptionKey(key: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, salt, 'campus-backup-encryption', 32));
}

/** Seals the gzip stream: the header, the ciphertext, then the GCM tag. */
function encryptWith(key: string): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
  return async function* (source) {
    const salt = randomBytes(SALT_BYTES);
    const iv = randomBytes(IV_BYTES);
    const header = Buffer.concat([ENCRYPTED_MAGIC, salt, iv]);
    const cipher = createCipheriv('aes-256-gcm', encryptionKey(key, salt), iv);
    cipher.setAAD(header);
    yield header;
    for await (const chunk of source) yield cipher.update(chunk);
    yield cipher.final();
    yield cipher.getAuthTag();
  };
}

function signatureOf(key: string, sha256: string, collections: readonly CollectionSummary[]): string {
  const sections = collections.map((c) => `${c.name}:${c.count}:${c.sha256}`).join('\n');
  return `hmac-sha256:${createHmac('sha256', `campus-backup:${key}`).update(`${sha256}\n${sections}`).digest('hex')}`;
}

/**
 * Writes every collection of the database to `file` (through a temporary file, renamed at the
 * end, so an interrupted backup never leaves a half archive under the final name). MongoDB-
 * compatible servers without transactions have no point-in-time read, so the dump is repeated
 * when the school data or the API keys changed while it ran (the shared version stamp moved);
 * OAuth artifacts written meanwhile (a login, a refresh) may or may not be in it.
 */
export async function writeBackup(
  db: Database,
  file: string,
  progress: Progress = () => {},
  signing: BackupSigning = { key: undefined },
): Promise<BackupSummary> {
  if (signing.encrypt && !signing.key) throw new BackupError('encrypting an archive needs BACKUP_KEY (at least 32 characters).');
  for (let attempt = 1; ; attempt++) {
    const before = await db.versions.readFresh();
    const summary = await dumpOnce(db.client.db(), file, progress, signing);
    const after = await db.versions.readFresh();
    if ((before.data === after.data && before.keys === after.keys) || attempt >= CONSISTENCY_ATTEMPTS) return summary;
    progress('the data changed while it was read; taking the backup again');
  }
}

async function dumpOnce(db: Db, file: string, progress: Progress, signing: BackupSigning): Promise<BackupSummary> {
  const partial = `${file}.partial`;
  // A leftover of an interrupted run would keep its own mode; the archive is created 0600.
  await rm(partial, { force: true });
  const createdAt = new Date().toISOString();
  const names = (await userCollections(db)).sort();
  const collections: CollectionSummary[] = [];
  const whole = createHash('sha256');

  async function* lines(): AsyncGenerator<string> {
    const emit = (line: string) => {
      whole.update(line).update('\n');
      return `${line}\n`;
    };
    yield emit(JSON.stringify({ format: BACKUP_FORMAT, version: BACKUP_FORMAT_VERSION, createdAt }));
    for (const name of names) {
      yield emit(JSON.stringify({ collection: name }));
      const section = createHash('sha256');
      let count = 0;
      for await (const doc of db.collection(name).find({}).sort({ _id: 1 }).batchSize(INSERT_BATCH)) {
        const line = BSON.EJSON.stringify(doc, { relaxed: false });
        section.update(line).update('\n');
        count++;
        if (count % 10000 === 0) progress(`  ${name}: ${counted(count, 'document')}`);
        yield emit(line);
      }
      collections.push({ name, count, sha256: section.digest('hex') });
      progress(`${name}: ${counted(count, 'document')}`);
    }
    const sha256 = whole.digest('hex');
    const signature = signing.key ? { signature: signatureOf(signing.key, sha256, collections) } : {};
    yield `${JSON.stringify({ manifest: { collections, sha256, ...signature } })}\n`;
  }

  try {
    const out = createWriteStream(partial, { mode: 0o600 });
    if (signing.encrypt && signing.key) await pipeline(Readable.from(lines()), createGzip(), encryptWith(signing.key), out);
    else await pipeline(Readable.from(lines()), createGzip(), out);
    await rename(partial, file);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return {
    file,
    createdAt,
    collections,
    documents: collections.reduce((n, c) => n + c.count, 0),
    signed: Boolean(signing.key),
    encrypted: Boolean(signing.encrypt && signing.key),
  };
}

/** What `readArchive` found in a file that passed every check. */
export interface VerifiedArchive {
  readonly createdAt: string;
  readonly collections: readonly CollectionSummary[];
  readonly documents: number;
  /** The schema version of the database it was taken from (0: from before migrations). */
  readonly schemaVersion: number;
}

/**
 * Reads the whole archive once and checks it: gzip intact, header of this format and version,
 * every line parseable, sections matching the manifest's counts and checksums, the manifest
 * last. Throws BackupError naming the first problem.
 */
export async function verifyArchive(file: string, signing: BackupSigning = { key: undefined }): Promise<VerifiedArchive> {
  return readArchive(file, async () => {}, signing);
}

type SectionSink = (collection: string, docs: Document[]) => Promise<void>;

async function readArchive(file: string, sink: SectionSink, signing: BackupSigning): Promise<VerifiedArchive> {
  const whole = createHash('sha256');
  let header: { createdAt: string } | undefined;
  let manifest: { collections: CollectionSummary[]; sha256: string; signature: string | undefined } | undefined;
  const seen: CollectionSummary[] = [];
  let current: { name: string; hash: ReturnType<typeof createHash>; count: number; batch: Document[] } | undefined;
  let lineNo = 0;
  let schemaVersion = 0;

  const closeSection = async () => {
    if (!current) return;
    if (current.batch.length > 0) await sink(current.name, current.batch.splice(0));
    seen.push({ name: current.name, count: current.count, sha256: current.hash.digest('hex') });
    current = undefined;
  };

  const input = createGunzip();
  // A failure of the file or of its decryption reaches the lines below through the gunzip stream.
  pipeline(await archiveBytes(file, signing), input).catch(() => {});
  try {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      lineNo++;
      if (manifest) throw new BackupError(`line ${lineNo}: data after the manifest; the archive was altered.`);
      if (lineNo === 1) {
        header = parseHeader(line);
        whole.update(line).update('\n');
        continue;
      }
      if (line.startsWith('{"manifest":')) {
        await closeSection();
        manifest = parseManifest(line, lineNo);
        continue;
      }
      whole.update(line).update('\n');
      if (line.startsWith('{"collection":')) {
        await closeSection();
        current = { name: parseSection(line, lineNo), hash: createHash('sha256'), count: 0, batch: [] };
        continue;
      }
      if (!current) throw new BackupError(`line ${lineNo}: a document outside any collection section.`);
      current.hash.update(line).update('\n');
      current.count++;
      const doc = parseDocument(line, lineNo);
      // Canonical Extended JSON reads numbers back as BSON Int32/Double objects: Number() unwraps them.
      if (current.name === 'meta' && doc['_id'] === SCHEMA_ID) schemaVersion = Number(doc['version'] ?? 0);
      current.batch.push(doc);
      if (current.batch.length >= INSERT_BATCH) await sink(current.name, current.batch.splice(0));
    }
  } catch (err) {
    if (err instanceof BackupError) throw err;
    // zlib reports a cut-off file as "unexpected end of file"; anything else it reports is damage too.
    throw new BackupError(`${file} is not a readable backup archive (${(err as Error).message}).`);
  }
  if (!header) throw new BackupError(`${file} is empty.`);
  if (!manifest) throw new BackupError(`${file} has no manifest: the archive is truncated.`);
  if (manifest.sha256 !== whole.digest('hex'))
    throw new BackupError(`${file} does not match its checksum: the archive was altered or damaged.`);
  compareSections(seen, manifest.collections);
  checkSignature(file, manifest, signing);
  return { createdAt: header.createdAt, collections: seen, documents: seen.reduce((n, c) => n + c.count, 0), schemaVersion };
}

/**
 * The gzip bytes of an archive: the file itself, or for an encrypted one its decrypted content,
 * once its tag has been checked over the whole file (so no unauthenticated byte is ever parsed).
 */
async function archiveBytes(file: string, signing: BackupSigning): Promise<Readable> {
  const sealed = await readSeal(file);
  if (!sealed) return createReadStream(file);
  if (!signing.key) throw new BackupError(`${file} is encrypted: set BACKUP_KEY to the key it was written with.`);
  const key = signing.key;
  const decrypted = () => decrypt(file, key, sealed);
  for await (const chunk of decrypted()) void chunk; // authenticate first, keep nothing
  return Readable.from(decrypted());
}

interface Seal {
  readonly header: Buffer;
  readonly tag: Buffer;
  readonly size: number;
}

/** The header and tag of an encrypted archive, or null for a plain one. */
async function readSeal(file: string): Promise<Seal | null> {
  const handle = await open(file, 'r').catch(() => null);
  // A missing file is reported by the read that follows, as it always was.
  if (!handle) return null;
  try {
    const { size } = await handle.stat();
    const header = Buffer.alloc(ENCRYPTED_HEADER_BYTES);
    const { bytesRead } = await handle.read(header, 0, header.length, 0);
    if (bytesRead < ENCRYPTED_MAGIC.length || !header.subarray(0, ENCRYPTED_MAGIC.length).equals(ENCRYPTED_MAGIC)) return null;
    if (size < ENCRYPTED_HEADER_BYTES + TAG_BYTES) throw new BackupError(`${file} is an encrypted archive cut short.`);
    const tag = Buffer.alloc(TAG_BYTES);
    await handle.read(tag, 0, TAG_BYTES, size - TAG_BYTES);
    return { header, tag, size };
  } finally {
    await handle.close();
  }
}

async function* decrypt(file: string, key: string, seal: Seal): AsyncGenerator<Buffer> {
  const salt = seal.header.subarray(ENCRYPTED_MAGIC.length, ENCRYPTED_MAGIC.length + SALT_BYTES);
  const iv = seal.header.subarray(ENCRYPTED_MAGIC.length + SALT_BYTES);
  const decipher: DecipherGCM = createDecipheriv('aes-256-gcm', encryptionKey(key, salt), iv);
  decipher.setAAD(seal.header);
  decipher.setAuthTag(seal.tag);
  const body = createReadStream(file, { start: ENCRYPTED_HEADER_BYTES, end: seal.size - TAG_BYTES - 1 });
  for await (const chunk of body as AsyncIterable<Buffer>) yield decipher.update(chunk);
  try {
    yield decipher.final();
  } catch {
    throw new BackupError(`${file} could not be decrypted with BACKUP_KEY: it was written with another key, or altered.`);
  }
}

function parseHeader(line: string): { createdAt: string } {
  const header = parseJson(line, 1) as { format?: unknown; version?: unknown; createdAt?: unknown };
  if (header.format !== BACKUP_FORMAT) throw new BackupError('not a Campus Data Service backup (unknown header).');
  if (header.version !== BACKUP_FORMAT_VERSION) {
    throw new BackupError(
      `backup format version ${String(header.version)} is not supported (this version reads ${BACKUP_FORMAT_VERSION}).`,
    );
  }
  return { createdAt: String(header.createdAt) };
}

function parseManifest(line: string, lineNo: number): { collections: CollectionSummary[]; sha256: string; signature: string | undefined } {
  const value = parseJson(line, lineNo) as { manifest?: { collections?: unknown; sha256?: unknown; signature?: unknown } };
  const collections = value.manifest?.collections;
  const sha256 = value.manifest?.sha256;
  const signature = value.manifest?.signature;
  if (!Array.isArray(collections) || typeof sha256 !== 'string' || (signature !== undefined && typeof signature !== 'string')) {
    throw new BackupError(`line ${lineNo}: the manifest is malformed.`);
  }
  return { collections: collections as CollectionSummary[], sha256, signature };
}

/**
 * With BACKUP_KEY, only an archive signed under it is read: a checksum anyone can recompute
 * after an edit, the signature only the key's holder. Without BACKUP_KEY a signed archive
 * cannot be checked and is refused too (set the key it was written with).
 */
function checkSignature(
  file: string,
  manifest: { collections: CollectionSummary[]; sha256: string; signature: string | undefined },
  signing: BackupSigning,
): void {
  if (!signing.key) {
    if (manifest.signature) throw new BackupError(`${file} is signed: set BACKUP_KEY to the key it was written with to check it.`);
    return;
  }
  if (!manifest.signature) throw new BackupError(`${file} has no signature, and BACKUP_KEY is set: only signed archives are restored.`);
  if (!sameSecret(manifest.signature, signatureOf(signing.key, manifest.sha256, manifest.collections))) {
    throw new BackupError(`${file} has no valid signature under BACKUP_KEY: the archive was altered, or written with another key.`);
  }
}

function parseSection(line: string, lineNo: number): string {
  const name = (parseJson(line, lineNo) as { collection?: unknown }).collection;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,120}$/.test(name) || name.startsWith(STAGING_PREFIX)) {
    throw new BackupError(`line ${lineNo}: invalid collection name.`);
  }
  return name;
}

function parseDocument(line: string, lineNo: number): Document {
  try {
    return BSON.EJSON.parse(line, { relaxed: false }) as Document;
  } catch {
    throw new BackupError(`line ${lineNo}: not a valid document.`);
  }
}

function parseJson(line: string, lineNo: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupError(`line ${lineNo}: not valid JSON; the archive is damaged.`);
  }
}

function compareSections(seen: readonly CollectionSummary[], listed: readonly CollectionSummary[]): void {
  const key = (c: CollectionSummary) => `${c.name}:${c.count}:${c.sha256}`;
  const a = seen.map(key).join('\n');
  const b = listed.map(key).join('\n');
  if (a !== b) throw new BackupError('the collections do not match the manifest: the archive was altered or damaged.');
}

export interface RestoreOptions {
  /** Replace a database that already holds data. */
  readonly force?: boolean;
  readonly progress?: Progress;
  /** BACKUP_KEY: with it only archives signed under it are restored. */
  readonly signing?: BackupSigning;
}

/**
 * Restores an archive, all or nothing: the archive is verified completely first (and refused
 * when it comes from a schema newer than this code); then every collection is written beside
 * the live ones (staging collections, checked again against the manifest as they are written)
 * and only when all of them are complete do they replace the live ones, so a failure before
 * that point leaves the database as it was. The switch itself is one drop and one rename per
 * collection (FerretDB has no renameCollection with dropTarget); should the process die during
 * it, the archive is intact and `campus restore --force` finishes the job. Indexes are
 * recreated, a migration lock the archive caught is removed, and the data versions moved past
 * every value running instances may have cached, so their caches and ETags change at once.
 */
export async function restoreBackup(db: Database, file: string, options: RestoreOptions = {}): Promise<VerifiedArchive> {
  const progress = options.progress ?? (() => {});
  const raw = db.client.db();
  // Mongoose creates the models' collections in the background when a connection opens; let it
  // finish first, so no collection appears under a name the switch below is about to rename to.
  await Promise.all(Object.values(db.connection.models).map((model) => model.init()));
  progress(`checking ${file}`);
  const signing = options.signing ?? { key: undefined };
  const archive = await verifyArchive(file, signing);
  progress(`archive verified: ${describeCounts(archive)} (taken ${archive.createdAt})`);
  if (archive.schemaVersion > SCHEMA_VERSION) {
    throw new BackupError(
      `the archive comes from schema version ${archive.schemaVersion}, newer than this code (${SCHEMA_VERSION}); restore it with the newer release.`,
    );
  }
  const existing = await userCollections(raw);
  if (!options.force) {
    const nonEmpty = await nonEmptyCollections(raw, existing);
    if (nonEmpty.length > 0) {
      throw new BackupError(
        `the database is not empty (${nonEmpty.join(', ')}); restore into an empty database, or pass --force to replace it.`,
      );
    }
  }
  await dropStaging(raw);
  try {
    let staged = 0;
    await readArchive(
      file,
      async (collection, docs) => {
        await raw.collection(STAGING_PREFIX + collection).insertMany(docs, { ordered: true });
        staged += docs.length;
        if (Math.floor(staged / 10000) > Math.floor((staged - docs.length) / 10000)) {
          progress(`  staged ${staged} of ${counted(archive.documents, 'document')}`);
        }
      },
      signing,
    );
    for (const { name, count } of archive.collections) {
      // An empty section still replaces its collection (with an empty one).
      if (count === 0) await raw.createCollection(STAGING_PREFIX + name).catch(() => {});
    }
  } catch (err) {
    await dropStaging(raw);
    throw err;
  }
  progress('every collection is staged; replacing the live ones');
  await switchCollections(raw, new Set(archive.collections.map((c) => c.name))).catch((err: unknown) => {
    throw new RestoreInterruptedError(
      `The database failed while the restored collections replaced the live ones (${(err as Error).message}); the archive is intact: run the same restore again with --force.`,
      err,
    );
  });
  await raw.collection('meta').deleteOne({ _id: LOCK_ID } as never);
  await db.ensureIndexes();
  await db.versions.bumpAll();
  progress(`restored ${describeCounts(archive)}`);
  return archive;
}

/**
 * Replaces each live collection by its staged one (drop, then rename: FerretDB has no
 * renameCollection with dropTarget), and drops the live collections the archive does not hold
 * (they were not in the backed-up database either). The live list is read now, not when the
 * restore began.
 */
async function switchCollections(db: Db, restored: ReadonlySet<string>): Promise<void> {
  const live = new Set(await userCollections(db));
  for (const name of restored) {
    if (live.has(name)) await db.collection(name).drop();
    await db.collection(STAGING_PREFIX + name).rename(name);
  }
  for (const name of [...live].filter((n) => !restored.has(n))) await db.collection(name).drop();
}

/** The service's collections (staging collections of an interrupted restore excluded). */
async function userCollections(db: Db): Promise<string[]> {
  const infos = await db.listCollections({}, { nameOnly: true }).toArray();
  return infos.map((c) => c.name).filter((name) => !name.startsWith('system.') && !name.startsWith(STAGING_PREFIX));
}

/**
 * Collections holding documents. `meta` is left out: it holds only bookkeeping (the schema
 * version, data versions, locks) that a `campus serve` or `campus migrate` writes into a
 * database it found empty, and the archive's own `meta` replaces it.
 */
async function nonEmptyCollections(db: Db, names: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const name of names.filter((n) => n !== 'meta')) {
    if ((await db.collection(name).findOne({}, { projection: { _id: 1 } })) !== null) found.push(name);
  }
  return found;
}

async function dropStaging(db: Db): Promise<void> {
  const infos = await db.listCollections({}, { nameOnly: true }).toArray();
  for (const { name } of infos) {
    if (name.startsWith(STAGING_PREFIX))
      await db
        .collection(name)
        .drop()
        .catch(() => {});
  }
}

/** `13 documents in 18 collections`. */
export function describeCounts(archive: { readonly documents: number; readonly collections: readonly unknown[] }): string {
  return `${counted(archive.documents, 'document')} in ${counted(archive.collections.length, 'collection')}`;
}
