import type { Command } from 'commander';
import { ApiKeyService, API_KEY_VALIDITY_DAYS, API_SCOPES, parseScopes, type ApiKeySummary, type ApiScope } from '../../data/keys/store.js';
import { rateLimitSpec } from '../../config/index.js';
import { AccessAudit, CLI_ACTOR } from '../../data/accounts/access-log.js';
import { AccountStore } from '../../data/accounts/store.js';
import { findStanding } from '../../data/accounts/standing.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../data/database.js';
import { CliError, jsonCommand } from '../runtime.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('issue and manage data API keys (stored only as SHA-256 hashes)');

  jsonCommand(
    keys
      .command('issue')
      .description('issue a key; its value is printed once and cannot be shown again')
      .requiredOption('--scopes <scopes>', `comma-separated: ${API_SCOPES.join(', ')}`)
      .option('--days <days>', 'validity in days', String(API_KEY_VALIDITY_DAYS))
      .option('--label <label>', 'who or what the key is for')
      .option('--rate-limit <requests/seconds>', "this key's own limit, e.g. 600/60 (default: RATE_LIMIT)")
      .option(
        '--owner <email>',
        "issue the key as that account would in the developer console: its role's scope policy (KEY_SCOPE_POLICY), the 10-key limit, default validity and limit",
      )
      .option('--purpose <text>', 'with --owner: what the data is for (needed when a scope awaits approval)'),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, options: IssueOptions) => {
        const scopes = parseScopes(options.scopes);
        if (options.owner === undefined && options.purpose !== undefined) throw new CliError('--purpose goes with --owner.');
        if (options.owner !== undefined && (options.rateLimit !== undefined || options.days !== String(API_KEY_VALIDITY_DAYS)))
          throw new CliError(
            '--owner issues the key as the account would in the console: --days and --rate-limit are not allowed with it.',
          );
        const issued = await issue(await db(), config, scopes, options);
        return { key: issued.key, ...issued.summary };
      },
      human: (issued) => [`API key (shown once, store it now): ${issued.key}`, describeKey(issued)].join('\n'),
    },
  );

  const decisions = {
    approve: "approve a key's scopes that await approval: the key works for them at once (written to the access log)",
    refuse: "refuse a key's scopes that await approval: they stay refused, the key keeps its other scopes (written to the access log)",
  };
  for (const decision of ['approve', 'refuse'] as const) {
    jsonCommand(keys.command(`${decision} <id-or-prefix>`).description(decisions[decision]), {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, _options, [idOrPrefix]: [string]) => {
        const database = await db();
        const result = await new ApiKeyService(database, config.policy).decide(idOrPrefix, decision === 'approve', null);
        const owner = result.after.ownerAccountId === null ? null : await new AccountStore(database).findById(result.after.ownerAccountId);
        await new AccessAudit(database).record(CLI_ACTOR, {
          action: decision === 'approve' ? 'KEY_SCOPES_APPROVED' : 'KEY_SCOPES_REFUSED',
          target: { kind: 'API_KEY', id: result.after.id, label: `${result.after.prefix}… (${owner?.email ?? 'CLI'})` },
          detail: { scopes: result.decided, purpose: result.after.purpose, before: result.before.scopes, after: result.after.scopes },
        });
        return result;
      },
      human: (decided) => `${decision === 'approve' ? 'Approved' : 'Refused'} ${decided.decided.join(', ')}: ${describeKey(decided.after)}`,
      data: (decided) => decided.after,
    });
  }

  jsonCommand(keys.command('list').description('list keys (prefix, scopes, state, expiry); values are never shown'), {
    json: 'the keys',
    run: async ({ config, db }) => new ApiKeyService(await db(), config.policy).list(),
    human: (list) => (list.length === 0 ? 'No API keys.' : list.map(describeKey).join('\n')),
  });

  jsonCommand(
    keys
      .command('renew <id-or-prefix>')
      .description('extend a key for another validity period from now (the value stays the same)')
      .option('--days <days>', 'validity in days', String(API_KEY_VALIDITY_DAYS)),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, options: { days: string }, [idOrPrefix]: [string]) => {
        const days = parseDays(options.days);
        return new ApiKeyService(await db(), config.policy).renew(idOrPrefix, days);
      },
      human: (summary) => `Renewed: ${describeKey(summary)}`,
    },
  );

  jsonCommand(
    keys.command('rotate <id-or-prefix>').description('issue a new value with the same scopes and limit; the old value stops working now'),
    {
      json: 'the result',
      writes: true,
      run: async ({ config, db }, _options, [idOrPrefix]: [string]) => {
        const rotated = await new ApiKeyService(await db(), config.policy).rotate(idOrPrefix);
        return { key: rotated.key, ...rotated.summary };
      },
      human: (rotated) => [`New API key (shown once, store it now): ${rotated.key}`, describeKey(rotated)].join('\n'),
    },
  );

  jsonCommand(keys.command('revoke <id-or-prefix>').description('end a key now'), {
    json: 'the result',
    writes: true,
    run: async ({ config, db }, _options, [idOrPrefix]: [string]) => new ApiKeyService(await db(), config.policy).revoke(idOrPrefix),
    human: (summary) => `Revoked: ${describeKey(summary)}`,
  });
}

interface IssueOptions {
  scopes: string;
  days: string;
  label?: string;
  rateLimit?: string;
  owner?: string;
  purpose?: string;
}

/** Issues a key as an operator, or as its owner would in the developer console (--owner). */
async function issue(db: Database, config: Config, scopes: ApiScope[], options: IssueOptions) {
  const service = new ApiKeyService(db, config.policy);
  if (options.owner === undefined) {
    const days = parseDays(options.days);
    const rateLimit = options.rateLimit ? parseRateLimit(options.rateLimit) : null;
    return service.issue({ scopes, days, label: options.label ?? null, rateLimit });
  }
  const account = await new AccountStore(db).findByEmail(options.owner);
  const standing = account ? await findStanding(db, account._id) : null;
  if (!standing) throw new CliError(`No account ${options.owner}.`);
  return service.request(standing, { scopes, label: options.label ?? null, purpose: options.purpose ?? null });
}

function describeKey(k: ApiKeySummary): string {
  const limit = k.rateLimit ? ` limit=${k.rateLimit.points}/${k.rateLimit.durationSeconds}s` : '';
  const label = k.label ? ` "${k.label}"` : '';
  const waiting = k.pendingScopes.length > 0 ? ` pending=${k.pendingScopes.join(',')}` : '';
  const refused = k.refusedScopes.length > 0 ? ` refused=${k.refusedScopes.join(',')}` : '';
  return `${k.id} ${k.prefix}… ${k.state} scopes=${k.scopes.join(',')}${waiting}${refused} expires=${k.expiresAt.toISOString()}${limit}${label}`;
}

function parseDays(value: string): number {
  const days = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(days) || days < 1 || days > API_KEY_VALIDITY_DAYS) {
    throw new CliError(`--days must be a whole number from 1 to ${API_KEY_VALIDITY_DAYS} (keys are renewed every 30 days).`);
  }
  return days;
}

function parseRateLimit(value: string): { points: number; durationSeconds: number } {
  const parsed = rateLimitSpec.safeParse(value);
  if (!parsed.success) throw new CliError(`--rate-limit ${parsed.error.issues[0]?.message ?? 'is invalid'} (got '${value}').`);
  return parsed.data;
}
