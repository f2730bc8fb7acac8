import type { Command } from 'commander';
import { AccountStore } from '../../data/accounts/store.js';
import { APP_GRANTS, PKCE_POLICIES, type AppGrant, type PkcePolicy } from '../../data/apps/store.js';
import { LogoutNoticeStore } from '../../data/events/logout-notices.js';
import { CLI_ACTOR } from '../../data/accounts/access-log.js';
import { AppService, AppValidationError, DEFAULT_APP_SCOPES, type AppSummary } from '../../oauth/apps.js';
import { OAUTH_SCOPES } from '../../oauth/constants.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../data/database.js';
import { CliError, jsonCommand } from '../runtime.js';

/** `campus apps ...` (also `campus clients ...`): the OAuth apps of the registry. */
export function registerApps(program: Command): void {
  registerClients(program);
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
  grant: string[];
  backchannelLogoutUri?: string;
}

interface UpdateOptions {
  name?: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  scope: string[];
  firstParty?: boolean;
  pkce?: string;
  grant: string[];
  backchannelLogoutUri?: string;
}

function registerClients(program: Command): void {
  const clients = program
    .command('apps')
    .alias('clients')
    .description('register and manage OAuth apps, also called clients (secrets are shown once and stored hashed)');

  jsonCommand(
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
        `a scope the client may request (repeat; default: ${DEFAULT_APP_SCOPES.join(', ')}; known: ${OAUTH_SCOPES.join(', ')})`,
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
      .option('--grant <grant>', GRANT_HELP, collectGrant, [])
      .option('--backchannel-logout-uri <uri>', BACKCHANNEL_HELP),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, options: CreateOptions) => {
        const pkce = options.pkce === undefined ? undefined : parsePkce(options.pkce);
        if (options.owner !== undefined && (options.firstParty || pkce !== undefined || options.postLogoutRedirectUri.length > 0))
          throw new CliError(
            '--owner registers the app as the account would in the console: --first-party, --pkce and --post-logout-redirect-uri are not allowed with it.',
          );
        if (options.owner === undefined && options.serviceName !== undefined) throw new CliError('--service-name goes with --owner.');
        const created = await createApp(await db(), config, options, pkce);
        return { ...created.client, clientSecret: created.secret };
      },
      human: (created) =>
        [
          `Client created: ${describeClient(created)}`,
          `client_id: ${created.id}`,
          created.clientSecret
            ? `client_secret (shown once, store it now): ${created.clientSecret}`
            : 'Public client: no secret; use PKCE (S256).',
        ].join('\n'),
    },
  );

  jsonCommand(clients.command('list').description('list clients (never their secrets)'), {
    json: 'the clients',
    run: async ({ config, db }) => {
      const database = await db();
      const clients = await new AppService(database, config).list();
      const ids = [...new Set(clients.map((c) => c.ownerAccountId).filter((id): id is number => id !== null))];
      const emails = new Map((await new AccountStore(database).findByIds(ids)).map((a) => [a._id, a.email]));
      // The owner: an account's email, or null for an operator's (`campus clients create` without --owner).
      return clients.map((c) => ({ ...c, ownerEmail: c.ownerAccountId === null ? null : (emails.get(c.ownerAccountId) ?? null) }));
    },
    human: (list) => (list.length === 0 ? 'No clients.' : list.map(describeClient).join('\n')),
  });

  jsonCommand(
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
      .option('--grant <grant>', `the new list: ${GRANT_HELP}`, collectGrant, [])
      .option('--backchannel-logout-uri <uri>', `${BACKCHANNEL_HELP}; "" removes it`),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, options: UpdateOptions, [clientId]: [string]) => {
        const pkce = options.pkce === undefined ? undefined : parsePkce(options.pkce);
        const service = new AppService(await db(), config);
        return guard(() =>
          service.update(clientId, {
            ...(options.name !== undefined ? { name: options.name } : {}),
            ...(options.redirectUri.length > 0 ? { redirectUris: options.redirectUri } : {}),
            ...(options.postLogoutRedirectUri.length > 0 ? { postLogoutRedirectUris: options.postLogoutRedirectUri } : {}),
            ...(options.scope.length > 0 ? { scopes: splitScopes(options.scope) } : {}),
            ...(options.firstParty !== undefined ? { firstParty: options.firstParty } : {}),
            ...(pkce ? { pkce } : {}),
            ...signInOptions(options),
          }),
        );
      },
      human: (updated) => `Client updated: ${describeClient(updated)}`,
    },
  );

  for (const action of ['approve', 'disable', 'enable'] as const) {
    jsonCommand(
      clients.command(`${action} <client-id>`).description(
        {
          approve: 'approve an app in testing: everyone may sign in to it (written to the access log)',
          disable:
            'disable an app: its authorize answers an error page, its tokens stop at the token endpoint and userinfo at once (written to the access log)',
          enable: 'enable a disabled app again (written to the access log)',
        }[action],
      ),
      {
        json: 'the result',
        writes: true,
        run: async ({ config, db }, _options, [clientId]: [string]) => {
          const service = new AppService(await db(), config);
          return guard(() =>
            action === 'approve'
              ? service.approve(clientId, CLI_ACTOR)
              : action === 'disable'
                ? service.disable(clientId, CLI_ACTOR)
                : service.enable(clientId, CLI_ACTOR),
          );
        },
        human: (done) => `${done.before.state} -> ${done.after.state}: ${describeClient(done.after)}`,
        data: (done) => done.after,
      },
    );
  }

  jsonCommand(
    clients
      .command('rotate-secret <client-id>')
      .description('issue a new secret; the old one stops working now (tokens already issued stay valid)'),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, _options, [clientId]: [string]) => {
        const service = new AppService(await db(), config);
        const rotated = await guard(() => service.rotateSecret(clientId));
        return { ...rotated.client, clientSecret: rotated.secret };
      },
      human: (rotated) => [`New client_secret (shown once, store it now): ${rotated.clientSecret}`, describeClient(rotated)].join('\n'),
    },
  );

  jsonCommand(
    clients
      .command('logouts <client-id>')
      .description("the back-channel logout tokens sent to the app's server, latest first (as the developer console shows them)")
      .option('--limit <n>', 'how many (1 to 200)', '20'),
    {
      json: 'the notices',
      run: async ({ config, db }, options: { limit: string }, [clientId]: [string]) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new CliError('--limit must be a whole number from 1 to 200.');
        const database = await db();
        await guard(() => new AppService(database, config).get(clientId));
        return (await new LogoutNoticeStore(database).listFor(clientId, limit)).map(({ _id, ...notice }) => ({ id: _id, ...notice }));
      },
      human: (notices) =>
        notices.length === 0
          ? 'No logout tokens sent.'
          : notices
              .map((n) => {
                const last = n.attempts.at(-1);
                return `${n.createdAt.toISOString()} ${n.state} ${n.cause} sub=${n.sub} sid=${n.sid ?? '-'} attempts=${n.attempts.length}${last ? ` last=${last.status ?? 'no answer'}` : ''}`;
              })
              .join('\n'),
    },
  );

  jsonCommand(clients.command('delete <client-id>').description('delete a client and revoke every grant, code and token issued to it'), {
    json: 'the result',
    writes: true,
    run: async ({ config, db }, _options, [clientId]: [string]) => {
      const service = new AppService(await db(), config);
      return guard(() => service.delete(clientId));
    },
    human: (deleted) => `Deleted: ${describeClient(deleted.client)} (${deleted.revoked} grants, codes and tokens revoked)`,
  });
}

/** Registers an app as an operator, or as its owner would in the developer console (--owner). */
async function createApp(db: Database, config: Config, options: CreateOptions, pkce: PkcePolicy | undefined) {
  const service = new AppService(db, config);
  const scopes = options.scope.length > 0 ? { scopes: splitScopes(options.scope) } : {};
  const owner = options.owner;
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
        ...signInOptions(options),
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
      ...signInOptions(options),
    }),
  );
}

/** `--grant`: how the app's people sign in (src/data/models/oauth-client.model.ts, APP_GRANTS); repeatable. */
const GRANT_HELP = `how people sign in to the app: ${APP_GRANTS.join(' and/or ')} (repeat for several; default authorization_code, a browser at the redirect address; device: a code typed at /device, no redirect address needed)`;

function collectGrant(value: string, previous: string[]): string[] {
  const grant = value.trim().toLowerCase();
  if (!(APP_GRANTS as readonly string[]).includes(grant)) throw new CliError(`--grant must be one of ${APP_GRANTS.join(', ')}.`);
  return [...previous, grant];
}

const BACKCHANNEL_HELP =
  "where the app's server receives a signed logout token when a person's sign-in ends (OpenID Connect Back-Channel Logout)";

/** The grants (only when given) and the back-channel logout address of create and update. */
function signInOptions(options: { grant: string[]; backchannelLogoutUri?: string }): {
  grants?: AppGrant[];
  backchannelLogoutUri?: string | null;
} {
  return {
    ...(options.grant.length > 0 ? { grants: options.grant as AppGrant[] } : {}),
    ...(options.backchannelLogoutUri !== undefined ? { backchannelLogoutUri: options.backchannelLogoutUri } : {}),
  };
}

/** Validation failures of the service become one-line CLI errors. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppValidationError) throw new CliError(err.message);
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

function describeClient(c: AppSummary & { ownerEmail?: string | null }): string {
  const flags = [c.type, c.firstParty ? 'first-party' : undefined, c.pkce === 'optional' ? 'PKCE optional' : 'PKCE required']
    .filter(Boolean)
    .join(', ');
  const logout = c.postLogoutRedirectUris.length > 0 ? ` post-logout=${c.postLogoutRedirectUris.join(' ')}` : '';
  const grants = ` grants=${c.grants.join(',')}`;
  const backchannel = c.backchannelLogoutUri ? ` backchannel-logout=${c.backchannelLogoutUri}` : '';
  const owner = 'ownerEmail' in c ? ` owner=${typeof c.ownerEmail === 'string' ? c.ownerEmail : 'operator'}` : '';
  return `${c.id} "${c.name}" ${c.state} (${flags}) scopes=${c.scopes.join(',')} redirect=${c.redirectUris.join(' ')}${logout}${grants}${backchannel}${owner}`;
}
