import type { Command } from 'commander';
import { AccountStore } from '../../data/accounts/store.js';
import type { Database } from '../../data/database.js';
import { OAuthStore } from '../../data/accounts/oauth-records.js';
import { SignIns, type SignIn } from '../../oauth/sign-ins.js';
import { LogoutNotices } from '../../oauth/backchannel-logout.js';
import { CliError, jsonCommand } from '../runtime.js';

/**
 * `campus accounts sessions <email> [--json]` and `campus accounts sessions end <email> (--all |
 * --id <id>) [--json]`: a person's sign-ins at the authorization server, as /console/sessions
 * shows and ends them (src/oauth/sign-ins.ts).
 */
export function registerAccountSessions(accounts: Command): void {
  const sessions = jsonCommand(
    accounts
      .command('sessions')
      .description("list an account's sign-ins at the authorization server (browser, system, when signed in, last used)")
      .argument('<email>', 'the account'),
    {
      json: 'the sign-ins',
      run: async ({ db }, _options, [email]: [string]) => {
        const database = await db();
        const account = await accountByEmail(database, email);
        return {
          email: account.email,
          sessions: await new SignIns(new OAuthStore(database), new LogoutNotices(database)).list(account._id),
        };
      },
      human: (result) =>
        result.sessions.length === 0 ? `${result.email} is signed in nowhere.` : result.sessions.map(describeSignIn).join('\n'),
    },
  );
  jsonCommand(
    sessions
      .command('end <email>')
      .description('end sign-ins of an account: that browser asks for the password at its next sign-in (apps keep their access)')
      .option('--id <id>', 'the sign-in to end (its id, from `campus accounts sessions <email>`)')
      .option('--all', 'end every sign-in of the account'),
    {
      json: '{email, ended}',
      writes: true,
      run: async ({ db }, options: { id?: string; all?: boolean }, [email]: [string]) => {
        if (Boolean(options.id) === Boolean(options.all)) throw new CliError('Give exactly one of --id <id> and --all.');
        const database = await db();
        const account = await accountByEmail(database, email);
        const signIns = new SignIns(new OAuthStore(database), new LogoutNotices(database));
        if (options.all) return { email: account.email, ended: await signIns.endOthers(account._id) };
        if (!(await signIns.end(account._id, options.id ?? '')))
          throw new CliError(`${account.email} has no sign-in with the id ${options.id}.`);
        return { email: account.email, ended: 1 };
      },
      human: (result) => `Ended ${result.ended} sign-in${result.ended === 1 ? '' : 's'} of ${result.email}.`,
    },
  );
}

async function accountByEmail(db: Database, email: string) {
  const account = await new AccountStore(db).findByEmail(email.trim().toLowerCase());
  if (!account) throw new CliError(`No account has the email ${email}.`);
  return account;
}

function describeSignIn(s: SignIn): string {
  const device = [s.browser, s.os].filter(Boolean).join(' on ') || 'unknown browser';
  return `${s.id}  ${device}  signed in ${s.signedInAt ?? '?'}  last used ${s.lastUsedAt ?? '?'}${s.remembered ? '  (kept signed in)' : ''}`;
}
