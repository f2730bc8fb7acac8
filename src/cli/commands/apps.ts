import type { Command } from 'commander';
import { AccountStore } from '../../data/accounts/store.js';
import { APP_GRANTS, PKCE_POLICIES, type AppGrant, type PkcePolicy } from '../../data/apps/store.js';
import { API_SCOPES, parseScopes, scopeStatesOf, type ApiScope } from '../../data/keys/store.js';
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

interface CreateOptions extends MachineOptions {
  name: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  scope: string[];
  public?: boolean;
  firstParty?: boolean;
  pkce?: string;
  owner?: string;
  serviceName?: string;
  backchannelLogoutUri?: string;
}

/** How the app gets tokens, and the data scopes of its machine tokens (create and update). */
interface MachineOptions {
  grant: string[];
  dataScope: string[];
  purpose?: string;
}

interface UpdateOptions extends MachineOptions {
  name?: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  scope: string[];
  firstParty?: boolean;
  pkce?: string;
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
      .option('--grant <grant>', GRANT_HELP, collect, [])
      .option('--data-scope <scope>', DATA_SCOPE_HELP, collect, [])
      .option('--purpose <text>', PURPOSE_HELP)
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
          ...(created.grants.includes('client_credentials')
            ? ['Machine tokens: POST /v1/oauth/token with grant_type=client_credentials and the client id and secret.']
            : []),
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
      const states = await new AppService(database, config).dataScopeStates(clients);
      // The owner: an account's email, or null for an operator's (`campus clients create` without --owner);
      // where each data scope of its machine tokens stands, as `keys list` shows a key's.
      return clients.map((c) => {
        const scopes = states.get(c.id);
        return {
          ...c,
          ownerEmail: c.ownerAccountId === null ? null : (emails.get(c.ownerAccountId) ?? null),
          dataScopeStates: scopes ? scopeStatesOf(scopes) : {},
        };
      });
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
      .option('--grant <grant>', `the new grants (repeat): ${GRANT_HELP}`, collect, [])
      .option('--data-scope <scope>', `the new data scopes (repeat): ${DATA_SCOPE_HELP}`, collect, [])
      .option('--purpose <text>', PURPOSE_HELP)
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
            ...machineChanges(options),
            ...logoutOption(options),
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
          approve:
            'approve an app in testing (everyone may sign in to it) and the data scopes its machine tokens wait for (written to the access log)',
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
      .command('refuse <client-id>')
      .description("refuse the data scopes an app's machine tokens wait for: they stay refused (written to the access log)"),
    {
      json: 'the app, with the scopes refused (`refused`)',
      writes: true,
      run: async ({ config, db }, _options, [clientId]: [string]) => {
        const service = new AppService(await db(), config);
        const done = await guard(() => service.decideDataScopes(clientId, false, CLI_ACTOR));
        return { ...done.after, refused: done.decided };
      },
      human: (done) => `Refused ${done.refused.join(', ')}: ${describeClient(done)}`,
    },
  );

  jsonCommand(
    clients
      .command('tokens')
      .description("an app's machine tokens (client_credentials)")
      .command('revoke <client-id>')
      .description('revoke every machine token of the app at once, in every instance (the app asks the token endpoint for new ones)'),
    {
      json: 'the app, with `tokensRevoked: true`',
      writes: true,
      run: async ({ config, db }, _options, [clientId]: [string]) => {
        const service = new AppService(await db(), config);
        return { ...(await guard(() => service.revokeMachineTokens(clientId))), tokensRevoked: true };
      },
      human: (app) => `Machine tokens revoked: ${describeClient(app)}`,
    },
  );

  jsonCommand(
    clients
      .command('rotate-secret <client-id>')
      .description("issue a new secret; the old one stops working now, and so do the app's machine tokens (a person's tokens stay valid)"),
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
        ...machineChanges(options),
        public: options.public ?? false,
        firstParty: options.firstParty ?? false,
        ...(pkce ? { pkce } : {}),
        ...logoutOption(options),
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
      ...machineChanges(options),
      public: options.public ?? false,
      ...logoutOption(options),
    }),
  );
}

const BACKCHANNEL_HELP =
  "where the app's server receives a signed logout token when a person's sign-in ends (OpenID Connect Back-Channel Logout)";

/** The back-channel logout address of create and update (only when given). */
function logoutOption(options: { backchannelLogoutUri?: string }): { backchannelLogoutUri?: string | null } {
  return options.backchannelLogoutUri !== undefined ? { backchannelLogoutUri: options.backchannelLogoutUri } : {};
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

const GRANT_HELP = `how the app gets tokens (repeat): ${APP_GRANTS.join(', ')}; authorization_code (a person signs in in a browser, at the redirect address) by default, client_credentials for machine tokens of the data API (confidential apps), device (a code typed at /device; no redirect address needed)`;
const DATA_SCOPE_HELP = `with --grant client_credentials: a data scope of its machine tokens (repeat or comma-separate; ${API_SCOPES.join(', ')}); with --owner, as that account's keys would get them`;
const PURPOSE_HELP =
  "with --owner: what the data is for (required when a data scope awaits an administrator's approval, up to 500 characters)";

/** The grants, data scopes and purpose given on the command line (none: unchanged). */
function machineChanges(options: MachineOptions): { grants?: AppGrant[]; dataScopes?: ApiScope[]; dataPurpose?: string } {
  const grants = splitScopes(options.grant);
  const unknown = grants.filter((g) => !(APP_GRANTS as readonly string[]).includes(g));
  if (unknown.length > 0) throw new CliError(`--grant must be one of ${APP_GRANTS.join(', ')} (got ${unknown.join(', ')}).`);
  return {
    ...(grants.length > 0 ? { grants: grants as AppGrant[] } : {}),
    ...(options.dataScope.length > 0 ? { dataScopes: parseScopes(splitScopes(options.dataScope).join(',')) } : {}),
    ...(options.purpose !== undefined ? { dataPurpose: options.purpose } : {}),
  };
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
  const backchannel = c.backchannelLogoutUri ? ` backchannel-logout=${c.backchannelLogoutUri}` : '';
  const owner = 'ownerEmail' in c ? ` owner=${typeof c.ownerEmail === 'string' ? c.ownerEmail : 'operator'}` : '';
  const machine = c.grants.includes('client_credentials') ? ` data-scopes=${c.dataScopes.join(',')}` : '';
  return `${c.id} "${c.name}" ${c.state} (${flags}) grants=${c.grants.join(',')} scopes=${c.scopes.join(',')}${machine} redirect=${c.redirectUris.join(' ')}${logout}${backchannel}${owner}`;
}
