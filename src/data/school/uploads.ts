import { randomUUID } from 'node:crypto';
import type { Database } from '../database.js';
import type { SchoolUploadDoc } from '../models/audit.model.js';
import type { SchoolEntity } from './types.js';

/** How long a previewed file is kept for its application. */
export const UPLOAD_LIFETIME_MS = 60 * 60 * 1000;

export interface UploadInput {
  readonly kind: 'IMPORT' | 'ROLLOVER';
  readonly entity: SchoolEntity;
  readonly accountId: number | null;
  readonly fileName: string;
  readonly content: Buffer;
  readonly removeMissing: boolean;
  readonly now: Date;
}

/** Keeps a previewed file for an hour (older ones are dropped now); returns its id. */
export async function keepUpload(db: Database, input: UploadInput): Promise<string> {
  await db.models.schoolUploads.deleteMany({ createdAt: { $lt: new Date(input.now.getTime() - UPLOAD_LIFETIME_MS) } });
  const id = randomUUID();
  await db.models.schoolUploads.create({ _id: id, ...input, createdAt: input.now });
  return id;
}

/** The kept file, if it is still kept and belongs to this account. */
export async function findUpload(
  db: Database,
  id: string,
  accountId: number | null,
  now: Date,
): Promise<(SchoolUploadDoc & { content: Buffer }) | null> {
  const doc = await db.models.schoolUploads.findById(id).lean<SchoolUploadDoc>();
  if (!doc || doc.accountId !== accountId || doc.createdAt.getTime() < now.getTime() - UPLOAD_LIFETIME_MS) return null;
  const content = Buffer.isBuffer(doc.content) ? doc.content : Buffer.from((doc.content as { buffer: Uint8Array }).buffer);
  return { ...doc, content };
}

export async function dropUpload(db: Database, id: string): Promise<void> {
  await db.models.schoolUploads.deleteOne({ _id: id });
}
