import type { Command } from 'commander';
import { ACCOUNT_ROLES, AccountStore, PKCE_POLICIES, type AccountRole, type PkcePolicy } from '../../data/accounts.js';
import {
  AccountRuleError,
  AccountService,
  AccountValidationError,
  DuplicateAccountError,
  type AccountSummary,
} from '../../oauth/accounts.js';
import { createMailer } from '../../oauth/mail.js';
import { CLI_ACTOR } from '../../data/access-audit.js';
import { approvalMail } from '../../oauth/mail-texts.js';
import { ClientService, ClientValidationError, DEFAULT_CLIENT_SCOPES, type ClientSummary } from '../../oauth/clients.js';
import { OAUTH_SCOPES } from '../../oauth/constants.js';
import { loadOAuthKeys } from '../../oauth/keys.js';
import { MfaService } from '../../oauth/mfa.js';
import { PASSWORD_PROBLEM_MESSAGES, passwordProblem } from '../../oauth/password-policy.js';
import { registerAccountSessions } from './sessions.js';
import { CliError, WRITES, cliConfig, cliLogger, output, withDatabase } from '../runtime.js';

/** `campus clients ...` and `campus accounts ...`. */
export function registerOAuthCommands(program: Command): void {
  registerClients(program);
  registerAccounts(program);
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

interface CreateOptions {
  name: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  scope: string[];
  public?: boolean;
  firstParty?: boolean;
  pkce?: string;
  owner?: string;
  serviceName?: string;
  json?: boolean;
}

interface UpdateOptions {
  name?: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  scope: string[];
  firstParty?: boolean;
  pkce?: string;
  json?: boolean;
}

function registerClients(program: Command): void {
  const clients = program.command('clients').description('register and manage OAuth clients (secrets are shown once and stored hashed)');

  clients
    .command('create')
    .description('register a client; prints its id and, for confidential clients, its secret (once)')
    .requiredOption('--name <name>', 'shown on the login and consent pages')
    .option('--redirect-uri <uri>', 'an allowed redirect address, matched exactly (repeat for several)', collect, [])
    .option(
      '--post-logout-redirect-uri <uri>',
      'where logout (the end_session_endpoint) may send the user back, matched exactly (repeat for several)',
      collect,
      [],
    )
    .option(
      '--scope <scope>',
      `a scope the client may request (repeat; default: ${DEFAULT_CLIENT_SCOPES.join(', ')}; known: ${OAUTH_SCOPES.join(', ')})`,
      collect,
      [],
    )
    .option('--public', 'a public client (browser or mobile app): no secret, PKCE required')
    .option('--first-party', 'our own app: the consent page is skipped')
    .option(
      '--pkce <policy>',
      `${PKCE_POLICIES.join(' or ')}: PKCE is required of every client by default; optional only for a confidential legacy app`,
    )
    .option(
      '--owner <email>',
      'register the app as that account would in the developer console: never first-party, PKCE required, reserved names refused, at most 10 apps, in testing until approved when it asks for student data',
    )
    .option('--service-name <name>', 'with --owner: the service the login page names')
    .option('--json', 'print the result as JSON')
    .action(async (options: CreateOptions) => {
      const config = cliConfig();
      const pkce = options.pkce === undefined ? undefined : parsePkce(options.pkce);
      if (options.owner !== undefined && (options.firstParty || pkce !== undefined || options.postLogoutRedirectUri.length > 0))
        throw new CliError(
          '--owner registers the app as the account would in the console: --first-party, --pkce and --post-logout-redirect-uri are not allowed with it.',
        );
      if (options.owner === undefined && options.serviceName !== undefined) throw new CliError('--service-name goes with --owner.');
      const owner = options.owner;
      const created = await withDatabase(
        config,
        async ({ db }) => {
          const service = new ClientService(db, config);
          const scopes = options.scope.length > 0 ? { scopes: splitScopes(options.scope) } : {};
          if (owner === undefined) {
            return guard(() =>
              service.create({
                name: options.name,
                redirectUris: options.redirectUri,
                postLogoutRedirectUris: options.postLogoutRedirectUri,
                ...scopes,
                public: options.public ?? false,
                firstParty: options.firstParty ?? false,
                ...(pkce ? { pkce } : {}),
              }),
            );
          }
          const account = await new AccountStore(db).findByEmail(owner);
          if (!account) throw new CliError(`No account ${owner}.`);
          return guard(() =>
            service.createOwned(account._id, {
              name: options.name,
              serviceName: options.serviceName ?? null,
              redirectUris: options.redirectUri,
              ...scopes,
              public: options.public ?? false,
            }),
          );
        },
        WRITES,
      );
      output(options.json, { ...created.client, clientSecret: created.secret }, () =>
        [
          `Client created: ${describeClient(created.client)}`,
          `client_id: ${created.client.id}`,
          created.secret ? `client_secret (shown once, store it now): ${created.secret}` : 'Public client: no secret; use PKCE (S256).',
        ].join('\n'),
      );
    });

  clients
    .command('list')
    .description('list clients (never their secrets)')
    .option('--json', 'print the clients as JSON')
    .action(async (options: { json?: boolean }) => {
      const config = cliConfig();
      const list = await withDatabase(config, async ({ db }) => {
        const clients = await new ClientService(db, config).list();
        const ids = [...new Set(clients.map((c) => c.ownerAccountId).filter((id): id is number => id !== null))];
        const emails = new Map((await new AccountStore(db).findByIds(ids)).map((a) => [a._id, a.email]));
        // The owner: an account's email, or null for an operator's (`campus clients create` without --owner).
        return clients.map((c) => ({ ...c, ownerEmail: c.ownerAccountId === null ? null : (emails.get(c.ownerAccountId) ?? null) }));
      });
      output(options.json, list, () => (list.length === 0 ? 'No clients.' : list.map(describeClient).join('\n')));
    });

  clients
    .command('update <client-id>')
    .description('change a client; given lists replace the old ones')
    .option('--name <name>', 'new display name')
    .option('--redirect-uri <uri>', 'the new redirect addresses (repeat for several)', collect, [])
    .option('--post-logout-redirect-uri <uri>', 'the new post-logout redirect addresses (repeat for several)', collect, [])
    .option('--scope <scope>', 'the new allowed scopes (repeat for several)', collect, [])
    .option('--first-party', 'skip the consent page')
    .option('--no-first-party', 'show the consent page')
    .option('--pkce <policy>', `${PKCE_POLICIES.join(' or ')} (optional only for a confidential legacy app)`)
    .option('--json', 'print the result as JSON')
    .action(async (clientId: string, options: UpdateOptions) => {
      const config = cliConfig();
      const pkce = options.pkce === undefined ? undefined : parsePkce(options.pkce);
      const updated = await withDatabase(
        config,
        ({ db }) =>
          guard(() =>
            new ClientService(db, config).update(clientId, {
              ...(options.name !== undefined ? { name: options.name } : {}),
              ...(options.redirectUri.length > 0 ? { redirectUris: options.redirectUri } : {}),
              ...(options.postLogoutRedirectUri.length > 0 ? { postLogoutRedirectUris: options.postLogoutRedirectUri } : {}),
              ...(options.scope.length > 0 ? { scopes: splitScopes(options.scope) } : {}),
              ...(options.firstParty !== undefined ? { firstParty: options.firstParty } : {}),
              ...(pkce ? { pkce } : {}),
            }),
          ),
        WRITES,
      );
      output(options.json, updated, () => `Client updated: ${describeClient(updated)}`);
    });

  for (const action of ['approve', 'disable', 'enable'] as const) {
    clients
      .command(`${action} <client-id>`)
      .description(
        {
          approve: 'approve an app in testing: everyone may sign in to it (written to the access log)',
          disable:
            'disable an app: its authorize answers an error page, its tokens stop at the token endpoint and userinfo at once (written to the access log)',
          enable: 'enable a disabled app again (written to the access log)',
        }[action],
      )
      .option('--json', 'print the result as JSON')
      .action(async (clientId: string, options: { json?: boolean }) => {
        const config = cliConfig();
        const done = await withDatabase(
          config,
          ({ db }) =>
            guard(() => {
              const service = new ClientService(db, config);
              return action === 'approve'
                ? service.approve(clientId, CLI_ACTOR)
                : action === 'disable'
                  ? service.disable(clientId, CLI_ACTOR)
                  : service.enable(clientId, CLI_ACTOR);
            }),
          WRITES,
        );
        output(options.json, done.after, () => `${done.before.state} -> ${done.after.state}: ${describeClient(done.after)}`);
      });
  }

  clients
    .command('rotate-secret <client-id>')
    .description('issue a new secret; the old one stops working now (tokens already issued stay valid)')
    .option('--json', 'print the result as JSON')
    .action(async (clientId: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const rotated = await withDatabase(config, ({ db }) => guard(() => new ClientService(db, config).rotateSecret(clientId)), WRITES);
      output(options.json, { ...rotated.client, clientSecret: rotated.secret }, () =>
        [`New client_secret (shown once, store it now): ${rotated.secret}`, describeClient(rotated.client)].join('\n'),
      );
    });

  clients
    .command('delete <client-id>')
    .description('delete a client and revoke every grant, code and token issued to it')
    .option('--json', 'print the result as JSON')
    .action(async (clientId: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const deleted = await withDatabase(config, ({ db }) => guard(() => new ClientService(db, config).delete(clientId)), WRITES);
      output(
        options.json,
        deleted,
        () => `Deleted: ${describeClient(deleted.client)} (${deleted.revoked} grants, codes and tokens revoked)`,
      );
    });
}

function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description('login accounts (email + password, stored as argon2id hashes)');

  accounts
    .command('create')
    .description('create an account; it is linked to the student with the same email')
    .requiredOption('--email <email>', 'the login email')
    .option('--password <password>', 'at least 8 characters (visible to `ps` and shell history: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .option('--role <role>', `one of ${ACCOUNT_ROLES.join(', ')}`, 'USER')
    .option('--json', 'print the result as JSON')
    .action(async (options: { email: string; password?: string; passwordStdin?: boolean; role: string; json?: boolean }) => {
      const role = parseRole(options.role);
      const password = await passwordOf(options);
      // The rule every self-service password meets (src/oauth/password-policy.ts), for accounts made here too.
      const problem = await passwordProblem(password, options.email);
      if (problem) throw new CliError(`${PASSWORD_PROBLEM_MESSAGES[problem]}.`);
      const created = await withDatabase(
        cliConfig(),
        ({ db }) => guard(() => new AccountService(db).create({ email: options.email, password, role })),
        WRITES,
      );
      output(options.json, created, () => `Account created: ${describeAccount(created)}`);
    });

  for (const decision of ['approve', 'refuse'] as const) {
    accounts
      .command(`${decision} <email>`)
      .description(
        decision === 'approve'
          ? "approve a teacher's sign-up, as the admin console does: the account becomes TEACHER (not ADMIN), is mailed, and the decision is in the access log"
          : "refuse a teacher's sign-up, as the admin console does: the account keeps its role, is mailed, and the decision is in the access log",
      )
      .option('--json', 'print the result as JSON')
      .action(async (email: string, options: { json?: boolean }) => {
        const config = cliConfig();
        const decided = await withDatabase(
          config,
          ({ db }) => guard(() => new AccountService(db).decideTeacher('CLI', email, decision === 'approve')),
          WRITES,
        );
        // The decision stands whether or not the mail goes out (as in the console).
        const mailer = createMailer(config, cliLogger(config));
        const mailed = await mailer
          .send(approvalMail(decided.email, decision === 'approve', `${config.urls.auth}/console`))
          .then(() => true)
          .catch(() => false);
        await mailer.close();
        output(options.json, { ...decided, mailed }, () =>
          [
            `${decision === 'approve' ? 'Approved as a teacher' : 'Refused'}: ${describeAccount(decided)}`,
            mailed ? `Mailed ${decided.email}.` : `Could not mail ${decided.email}; tell them yourself.`,
          ].join('\n'),
        );
      });
  }

  // Issue 25: as the admin console's account page does, in the access log as the operator (CLI).
  for (const action of ['disable', 'enable'] as const) {
    accounts
      .command(`${action} <email>`)
      .description(
        action === 'disable'
          ? 'disable an account: it cannot sign in, its sessions end, its tokens stop at userinfo and its API keys at the data API, at once (nothing is deleted)'
          : 'enable a disabled account again: it signs in, and its tokens and API keys work again',
      )
      .option('--json', 'print the account as JSON (with `changed`: false when it already was)')
      .action(async (email: string, options: { json?: boolean }) => {
        const done = await withDatabase(
          cliConfig(),
          ({ db }) => guard(() => new AccountService(db).setDisabled('CLI', email, action === 'disable')),
          WRITES,
        );
        output(options.json, { ...done.account, changed: done.changed }, () =>
          done.changed
            ? `${action === 'disable' ? 'Disabled' : 'Enabled'}: ${describeAccount(done.account)}`
            : `Already ${action === 'disable' ? 'disabled' : 'enabled'}: ${describeAccount(done.account)}`,
        );
      });
  }

  accounts
    .command('list')
    .description('list accounts (never their password hashes)')
    .option('--json', 'print the accounts as JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withDatabase(cliConfig(), ({ db }) => new AccountService(db).list());
      output(options.json, list, () => (list.length === 0 ? 'No accounts.' : list.map(describeAccount).join('\n')));
    });

  accounts
    .command('delete <id-or-email>')
    .description('delete an account and revoke its grants, tokens and sessions')
    .option('--json', 'print the result as JSON')
    .action(async (idOrEmail: string, options: { json?: boolean }) => {
      const deleted = await withDatabase(cliConfig(), ({ db }) => guard(() => new AccountService(db).delete(idOrEmail)), WRITES);
      output(
        options.json,
        deleted,
        () => `Deleted: ${describeAccount(deleted.account)} (${deleted.revoked} grants, tokens and sessions revoked)`,
      );
    });

  const mfa = accounts.command('mfa').description('two-step sign-in (TOTP, RFC 6238) of an account, for operators');
  mfa
    .command('enroll <email>')
    .description(
      'give the account a new second factor, active at once (replaces any earlier one): prints the otpauth:// URI for the authenticator app and the recovery codes, once',
    )
    .option('--json', 'print {email, secret, uri, recoveryCodes} as JSON')
    .action(async (email: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const result = await withDatabase(
        config,
        async ({ db }) => {
          const account = await new AccountStore(db).findByEmail(email.trim().toLowerCase());
          if (!account) throw new CliError(`No account has the email ${email}.`);
          const keys = await loadOAuthKeys(config, db);
          const enrolment = await new MfaService(db, keys.cookieKeys).enrol(account._id, account.email, { active: true });
          return { email: account.email, ...enrolment };
        },
        WRITES,
      );
      output(
        options.json,
        result,
        () =>
          `Two-step sign-in is on for ${result.email}.\nAdd it to the authenticator app (shown only now):\n  ${result.uri}\nKey: ${result.secret}\nRecovery codes (each works once):\n${result.recoveryCodes.map((c) => `  ${c}`).join('\n')}`,
      );
    });
  mfa
    .command('reset <email>')
    .description("remove the account's second factor (a lost phone); it can then sign in with its password and enrol again")
    .option('--json', 'print {email, removed} as JSON')
    .action(async (email: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const result = await withDatabase(
        config,
        async ({ db }) => {
          const account = await new AccountStore(db).findByEmail(email.trim().toLowerCase());
          if (!account) throw new CliError(`No account has the email ${email}.`);
          const keys = await loadOAuthKeys(config, db);
          return { email: account.email, removed: await new MfaService(db, keys.cookieKeys).reset(account._id) };
        },
        WRITES,
      );
      output(options.json, result, () =>
        result.removed ? `Two-step sign-in removed from ${result.email}.` : `${result.email} had no second factor.`,
      );
    });
  registerAccountSessions(accounts);
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
    if (
      err instanceof ClientValidationError ||
      err instanceof AccountValidationError ||
      err instanceof DuplicateAccountError ||
      err instanceof AccountRuleError
    ) {
      throw new CliError(err.message);
    }
    throw err;
  }
}

/** `--scope` may be repeated or hold a space- or comma-separated list. */
function splitScopes(values: string[]): string[] {
  return values.flatMap((v) => v.split(/[\s,]+/)).filter(Boolean);
}

function parsePkce(value: string): PkcePolicy {
  const policy = value.toLowerCase();
  if (!(PKCE_POLICIES as readonly string[]).includes(policy)) throw new CliError(`--pkce must be one of ${PKCE_POLICIES.join(', ')}.`);
  return policy as PkcePolicy;
}

function parseRole(value: string): AccountRole {
  const role = value.toUpperCase();
  if (!(ACCOUNT_ROLES as readonly string[]).includes(role)) throw new CliError(`--role must be one of ${ACCOUNT_ROLES.join(', ')}.`);
  return role as AccountRole;
}

function describeClient(c: ClientSummary & { ownerEmail?: string | null }): string {
  const flags = [c.type, c.firstParty ? 'first-party' : undefined, c.pkce === 'optional' ? 'PKCE optional' : 'PKCE required']
    .filter(Boolean)
    .join(', ');
  const logout = c.postLogoutRedirectUris.length > 0 ? ` post-logout=${c.postLogoutRedirectUris.join(' ')}` : '';
  const owner = 'ownerEmail' in c ? ` owner=${typeof c.ownerEmail === 'string' ? c.ownerEmail : 'operator'}` : '';
  return `${c.id} "${c.name}" ${c.state} (${flags}) scopes=${c.scopes.join(',')} redirect=${c.redirectUris.join(' ')}${logout}${owner}`;
}

function describeAccount(a: AccountSummary): string {
  const teacher = a.approval ? ` teacher sign-up ${a.approval}${a.name ? ` (${a.name}, ${a.department ?? ''})` : ''}` : '';
  return `${a.id} ${a.email} ${a.role}${a.isStudent ? ' (student)' : ''}${teacher}${a.disabledAt ? ' DISABLED' : ''}`;
}
