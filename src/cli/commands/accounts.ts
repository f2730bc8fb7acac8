import type { Command } from 'commander';
import { ACCOUNT_ROLES, AccountStore, type AccountRole } from '../../data/accounts/store.js';
import {
  AccountRuleError,
  AccountService,
  AccountValidationError,
  DuplicateAccountError,
  type AccountSummary,
} from '../../oauth/accounts.js';
import { createMailer } from '../../oauth/mail.js';
import { approvalMail } from '../../oauth/mail-texts.js';
import { loadOAuthKeys } from '../../oauth/signing-keys.js';
import { MfaService } from '../../oauth/second-factor.js';
import { PASSWORD_PROBLEM_MESSAGES, passwordProblem } from '../../oauth/password-policy.js';
import { registerAccountPasskeys } from './passkeys.js';
import { registerAccountSessions } from './sessions.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../data/database.js';
import { CliError, cliLogger, jsonCommand } from '../runtime.js';

/** `campus accounts ...`. */
export function registerAccountCommands(program: Command): void {
  registerAccounts(program);
}

function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description('login accounts (email + password, stored as argon2id hashes)');

  jsonCommand(
    accounts
      .command('create')
      .description('create an account; it is linked to the student with the same email')
      .requiredOption('--email <email>', 'the login email')
      .option('--password <password>', 'at least 8 characters (visible to `ps` and shell history: prefer --password-stdin)')
      .option('--password-stdin', 'read the password from the first line of standard input')
      .option('--role <role>', `one of ${ACCOUNT_ROLES.join(', ')}`, 'USER'),
    {
      json: 'the result',
      writes: true,
      run: async ({ db }, options: { email: string; password?: string; passwordStdin?: boolean; role: string }) => {
        const role = parseRole(options.role);
        const password = await passwordOf(options);
        // The rule every self-service password meets (src/oauth/password-policy.ts), for accounts made here too.
        const problem = await passwordProblem(password, options.email);
        if (problem) throw new CliError(`${PASSWORD_PROBLEM_MESSAGES[problem]}.`);
        const service = new AccountService(await db());
        return guard(() => service.create({ email: options.email, password, role }));
      },
      human: (created) => `Account created: ${describeAccount(created)}`,
    },
  );

  const decisions = {
    approve:
      "approve a teacher's sign-up, as the admin console does: the account becomes TEACHER (not ADMIN), is mailed, and the decision is in the access log",
    refuse:
      "refuse a teacher's sign-up, as the admin console does: the account keeps its role, is mailed, and the decision is in the access log",
  };
  for (const decision of ['approve', 'refuse'] as const) {
    jsonCommand(accounts.command(`${decision} <email>`).description(decisions[decision]), {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, _options, [email]: [string]) => {
        const service = new AccountService(await db());
        const decided = await guard(() => service.decideTeacher('CLI', email, decision === 'approve'));
        // The decision stands whether or not the mail goes out (as in the console).
        const mailer = createMailer(config, cliLogger(config));
        const mailed = await mailer
          .send(approvalMail(decided.email, decision === 'approve', `${config.urls.auth}/console`))
          .then(() => true)
          .catch(() => false);
        await mailer.close();
        return { ...decided, mailed };
      },
      human: (decided) =>
        [
          `${decision === 'approve' ? 'Approved as a teacher' : 'Refused'}: ${describeAccount(decided)}`,
          decided.mailed ? `Mailed ${decided.email}.` : `Could not mail ${decided.email}; tell them yourself.`,
        ].join('\n'),
    });
  }

  // As the admin console's account page does, in the access log as the operator (CLI).
  const actions = {
    disable:
      'disable an account: it cannot sign in, its sessions end, its tokens stop at userinfo and its API keys at the data API, at once (nothing is deleted)',
    enable: 'enable a disabled account again: it signs in, and its tokens and API keys work again',
  };
  for (const action of ['disable', 'enable'] as const) {
    jsonCommand(accounts.command(`${action} <email>`).description(actions[action]), {
      json: 'the account (with `changed`: false when it already was)',
      writes: true,
      run: async ({ db }, _options, [email]: [string]) => {
        const service = new AccountService(await db());
        const done = await guard(() => service.setDisabled('CLI', email, action === 'disable'));
        return { ...done.account, changed: done.changed };
      },
      human: (done) =>
        done.changed
          ? `${action === 'disable' ? 'Disabled' : 'Enabled'}: ${describeAccount(done)}`
          : `Already ${action === 'disable' ? 'disabled' : 'enabled'}: ${describeAccount(done)}`,
    });
  }

  jsonCommand(accounts.command('list').description('list accounts (never their password hashes)'), {
    json: 'the accounts',
    run: async ({ db }) => new AccountService(await db()).list(),
    human: (list) => (list.length === 0 ? 'No accounts.' : list.map(describeAccount).join('\n')),
  });

  jsonCommand(accounts.command('delete <id-or-email>').description('delete an account and revoke its grants, tokens and sessions'), {
    json: 'the result',
    writes: true,
    run: async ({ db }, _options, [idOrEmail]: [string]) => {
      const service = new AccountService(await db());
      return guard(() => service.delete(idOrEmail));
    },
    human: (deleted) => `Deleted: ${describeAccount(deleted.account)} (${deleted.revoked} grants, tokens and sessions revoked)`,
  });

  const mfa = accounts.command('mfa').description('two-step sign-in (TOTP, RFC 6238) of an account, for operators');
  jsonCommand(
    mfa
      .command('enroll <email>')
      .description(
        'give the account a new second factor, active at once (replaces any earlier one): prints the otpauth:// URI for the authenticator app and the recovery codes, once',
      ),
    {
      json: '{email, secret, uri, recoveryCodes}',
      writes: true,
      run: async ({ config, db }, _options, [email]: [string]) => {
        const { account, mfa } = await secondFactorOf(config, await db(), email);
        return { email: account.email, ...(await mfa.enrol(account._id, account.email, { active: true })) };
      },
      human: (result) =>
        `Two-step sign-in is on for ${result.email}.\nAdd it to the authenticator app (shown only now):\n  ${result.uri}\nKey: ${result.secret}\nRecovery codes (each works once):\n${result.recoveryCodes.map((c) => `  ${c}`).join('\n')}`,
    },
  );
  jsonCommand(
    mfa
      .command('reset <email>')
      .description("remove the account's second factor (a lost phone); it can then sign in with its password and enrol again"),
    {
      json: '{email, removed}',
      writes: true,
      run: async ({ config, db }, _options, [email]: [string]) => {
        const { account, mfa } = await secondFactorOf(config, await db(), email);
        return { email: account.email, removed: await mfa.reset(account._id) };
      },
      human: (result) => (result.removed ? `Two-step sign-in removed from ${result.email}.` : `${result.email} had no second factor.`),
    },
  );
  registerAccountSessions(accounts);
  registerAccountPasskeys(accounts);
}

/** The account of an email, and the service of its second factor. */
async function secondFactorOf(config: Config, db: Database, email: string) {
  const account = await new AccountStore(db).findByEmail(email.trim().toLowerCase());
  if (!account) throw new CliError(`No account has the email ${email}.`);
  const keys = await loadOAuthKeys(config, db);
  return { account, mfa: new MfaService(db, keys.cookieKeys) };
}

/** The password from exactly one of --password and --password-stdin. */
async function passwordOf(options: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (options.password !== undefined && options.passwordStdin) throw new CliError('Give either --password or --password-stdin, not both.');
  if (options.password !== undefined) {
    process.stderr.write(
      'Warning: --password puts the password on the command line, where other users of this machine can read it (ps, shell history). Use --password-stdin.\n',
    );
    return options.password;
  }
  if (!options.passwordStdin) throw new CliError('A password is required: --password-stdin (recommended) or --password.');
  let input = '';
  for await (const chunk of process.stdin) input += String(chunk);
  return input.split(/\r?\n/)[0] ?? '';
}

/** Validation failures of the services become one-line CLI errors. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AccountValidationError || err instanceof DuplicateAccountError || err instanceof AccountRuleError)
      throw new CliError(err.message);
    throw err;
  }
}

function parseRole(value: string): AccountRole {
  const role = value.toUpperCase();
  if (!(ACCOUNT_ROLES as readonly string[]).includes(role)) throw new CliError(`--role must be one of ${ACCOUNT_ROLES.join(', ')}.`);
  return role as AccountRole;
}

function describeAccount(a: AccountSummary): string {
  const teacher = a.approval ? ` teacher sign-up ${a.approval}${a.name ? ` (${a.name}, ${a.department ?? ''})` : ''}` : '';
  return `${a.id} ${a.email} ${a.role}${a.isStudent ? ' (student)' : ''}${teacher}${a.disabledAt ? ' DISABLED' : ''}`;
}
