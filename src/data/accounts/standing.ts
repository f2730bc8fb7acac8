import type { AccountStanding } from '../../auth/policy.js';
import type { Database } from '../database.js';
import type { AccountDoc } from '../models/account.model.js';
import { AccountStore } from './store.js';

/**
 * What the privilege rules (src/auth/policy.ts) read of accounts, loaded together: role,
 * disabled, whether a second factor is active and whether a passkey signs in. Three reads for any
 * number of accounts.
 */
export async function standingsOf(db: Database, ids: readonly number[]): Promise<Map<number, AccountStanding>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const [accounts, factors, passkeys] = await Promise.all([
    db.models.accounts.find({ _id: { $in: unique } }, { role: 1, disabledAt: 1 }).lean<Pick<AccountDoc, '_id' | 'role' | 'disabledAt'>[]>(),
    db.models.accountMfa.find({ _id: { $in: unique }, active: true }, { _id: 1 }).lean<{ _id: number }[]>(),
    db.models.passkeys.find({ accountId: { $in: unique }, flaggedAt: null }, { accountId: 1 }).lean<{ accountId: number }[]>(),
  ]);
  const withFactor = new Set(factors.map((f) => f._id));
  const withPasskey = new Set(passkeys.map((p) => p.accountId));
  return new Map(accounts.map((a) => [a._id, standingOf(a, { secondFactor: withFactor.has(a._id), passkey: withPasskey.has(a._id) })]));
}

/** One account's standing (null: no such account), remembered until a change names the account (src/data/accounts/store.ts, known). */
export async function findStanding(db: Database, id: number): Promise<AccountStanding | null> {
  const known = await new AccountStore(db).known(id);
  return known ? standingOf(known.doc, known) : null;
}

/** The standing of an account already read, given its factors: an active second factor, a passkey that signs in. */
export function standingOf(
  account: Pick<AccountDoc, '_id' | 'role' | 'disabledAt'>,
  factors: { readonly secondFactor: boolean; readonly passkey: boolean },
): AccountStanding {
  return {
    id: account._id,
    role: account.role,
    disabled: account.disabledAt != null,
    secondFactor: factors.secondFactor,
    passkey: factors.passkey,
  };
}
