import type { Command } from 'commander';
import { AccountStore } from '../../data/accounts/store.js';
import type { Database } from '../../data/database.js';
import { AccountRuleError } from '../../oauth/accounts.js';
import { PasskeyService, type PasskeySummary } from '../../oauth/passkeys.js';
import { CliError, jsonCommand } from '../runtime.js';

/**
 * `campus accounts passkeys list <email> [--json]` and `campus accounts passkeys remove <email>
 * (--all | --id <id>) [--json]`: an account's passkeys, as /console/account lists them and
 * /admin/accounts/<id> removes them (src/oauth/passkeys.ts); a removal is in the access log with
 * the operator (CLI) as its actor.
 */
export function registerAccountPasskeys(accounts: Command): void {
  const passkeys = accounts.command('passkeys').description("an account's passkeys (WebAuthn): list them, or remove them (a lost device)");
  jsonCommand(
    passkeys
      .command('list <email>')
      .description(
        "list an account's passkeys: name, when added and last used, synced or on one device, flagged (its counter went backwards)",
      ),
    {
      json: '{email, passkeys}',
      run: async ({ config, db }, _options, [email]: [string]) => {
        const database = await db();
        const account = await accountByEmail(database, email);
        return { email: account.email, passkeys: await new PasskeyService(database, config).list(account._id) };
      },
      human: (result) =>
        result.passkeys.length === 0 ? `${result.email} has no passkeys.` : result.passkeys.map(describePasskey).join('\n'),
    },
  );
  jsonCommand(
    passkeys
      .command('remove <email>')
      .description('remove passkeys of an account, as the admin console does: they sign in no more (the password still does)')
      .option('--id <id>', 'the passkey to remove (its id, from `campus accounts passkeys list <email>`)')
      .option('--all', 'remove every passkey of the account'),
    {
      json: '{email, removed}',
      writes: true,
      run: async ({ config, db }, options: { id?: string; all?: boolean }, [email]: [string]) => {
        if (Boolean(options.id) === Boolean(options.all)) throw new CliError('Give exactly one of --id <id> and --all.');
        const database = await db();
        const account = await accountByEmail(database, email);
        const done = await new PasskeyService(database, config).removeAs('CLI', account._id, options.id).catch((err: unknown) => {
          throw err instanceof AccountRuleError ? new CliError(err.message) : err;
        });
        if (options.id && done.removed.length === 0) throw new CliError(`${done.email} has no passkey with the id ${options.id}.`);
        return done;
      },
      human: (result) =>
        result.removed.length === 0
          ? `${result.email} had no passkeys.`
          : `Removed ${result.removed.length} passkey${result.removed.length === 1 ? '' : 's'} of ${result.email}: ${result.removed.map((p) => p.name).join(', ')}.`,
    },
  );
}

async function accountByEmail(db: Database, email: string) {
  const account = await new AccountStore(db).findByEmail(email.trim().toLowerCase());
  if (!account) throw new CliError(`No account has the email ${email}.`);
  return account;
}

function describePasskey(p: PasskeySummary): string {
  const state = p.flaggedAt ? `FLAGGED ${p.flaggedAt.toISOString()}` : p.synced ? 'synced' : 'one device';
  return `${p.id}  ${p.name}  added ${p.createdAt.toISOString()}  last used ${p.lastUsedAt?.toISOString() ?? 'never'}  ${state}`;
}
