import { randomUUID } from 'node:crypto';
import { addDays, zonedInstant } from '../../calendar.js';
import type { Database } from '../database.js';
import { ACCESS_ACTIONS, type AccessAction, type AccessAuditDoc } from '../models/access-audit.model.js';
import { containsInsensitive } from '../school/queries/page.js';

export { ACCESS_ACTIONS, type AccessAction, type AccessAuditDoc } from '../models/access-audit.model.js';

/** Who did it: an account (id and email), an operator at the `campus` command, or a migration. */
export type AccessActor =
  { readonly kind: 'ACCOUNT'; readonly id: number; readonly email: string } | { readonly kind: 'CLI' } | { readonly kind: 'MIGRATION' };

/** The operator at the `campus` command. */
export const CLI_ACTOR: AccessActor = { kind: 'CLI' };

export interface AccessEntryInput {
  readonly action: AccessAction;
  readonly target: {
    readonly kind: 'API_KEY' | 'APP' | 'ACCOUNT' | 'DATA' | 'PROPOSAL' | 'UPDATE_REQUEST';
    readonly id: string;
    readonly label: string;
  };
  readonly detail?: Record<string, unknown> | null;
  readonly at?: Date;
}

/** What the access log can be filtered by (every criterion optional). */
export interface AccessCriteria {
  readonly action?: AccessAction | null;
  /** An email (substring, any case), CLI or MIGRATION. */
  readonly actor?: string | null;
  /** A substring of the target's label or id (a key prefix, an app name, an email). */
  readonly target?: string | null;
  /** YYYY-MM-DD in the school's time zone, both ends included. */
  readonly from?: string | null;
  readonly to?: string | null;
}

/** The access log (src/data/models/access-audit.model.ts): written by each privilege change and export, read in /admin/audit. */
export class AccessAudit {
  constructor(private readonly db: Database) {}

  async record(actor: AccessActor, entry: AccessEntryInput): Promise<void> {
    await this.db.models.accessAudit.create({
      _id: randomUUID(),
      at: entry.at ?? new Date(),
      actorKind: actor.kind,
      actorId: actor.kind === 'ACCOUNT' ? actor.id : null,
      actorEmail: actor.kind === 'ACCOUNT' ? actor.email : null,
      action: entry.action,
      targetKind: entry.target.kind,
      targetId: entry.target.id,
      targetLabel: entry.target.label,
      detail: entry.detail ?? null,
    });
  }

  /** One page of entries, newest first, and how many match. */
  async list(
    criteria: AccessCriteria,
    page: number,
    size: number,
    timeZone: string,
  ): Promise<{ entries: AccessAuditDoc[]; total: number }> {
    const query = accessQuery(criteria, timeZone);
    const [entries, total] = await Promise.all([
      this.db.models.accessAudit
        .find(query)
        .sort({ at: -1, _id: -1 })
        .skip(page * size)
        .limit(size)
        .lean<AccessAuditDoc[]>(),
      this.db.models.accessAudit.countDocuments(query),
    ]);
    return { entries, total };
  }
}

function accessQuery(c: AccessCriteria, timeZone: string): Record<string, unknown> {
  const q: Record<string, unknown> = {};
  if (c.action && (ACCESS_ACTIONS as readonly string[]).includes(c.action)) q['action'] = c.action;
  const actor = c.actor?.trim();
  if (actor) {
    if (actor.toUpperCase() === 'CLI' || actor.toUpperCase() === 'MIGRATION') q['actorKind'] = actor.toUpperCase();
    else q['actorEmail'] = containsInsensitive(actor);
  }
  const target = c.target?.trim();
  if (target) q['$or'] = [{ targetLabel: containsInsensitive(target) }, { targetId: containsInsensitive(target) }];
  const at: Record<string, Date> = {};
  if (c.from) at['$gte'] = zonedInstant(c.from, '00:00', timeZone);
  if (c.to) at['$lt'] = zonedInstant(addDays(c.to, 1), '00:00', timeZone);
  if (Object.keys(at).length > 0) q['at'] = at;
  return q;
}
