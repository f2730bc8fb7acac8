import type { Command } from 'commander';
import { ApiKeyService, API_KEY_VALIDITY_DAYS, API_SCOPES, parseScopes, type ApiKeySummary } from '../../data/keys/store.js';
import { rateLimitSpec } from '../../config/index.js';
import { AccessAudit, CLI_ACTOR } from '../../data/accounts/access-log.js';
import { AccountStore } from '../../data/accounts/store.js';
import { findStanding } from '../../data/accounts/standing.js';
import { CliError, WRITES, cliConfig, output, withDatabase } from '../runtime.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('issue and manage data API keys (stored only as SHA-256 hashes)');

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
    .option('--purpose <text>', 'with --owner: what the data is for (needed when a scope awaits approval)')
    .option('--json', 'print the result as JSON')
    .action(
      async (options: {
        scopes: string;
        days: string;
        label?: string;
        rateLimit?: string;
        owner?: string;
        purpose?: string;
        json?: boolean;
      }) => {
        const scopes = parseScopes(options.scopes);
        const config = cliConfig();
        if (options.owner === undefined && options.purpose !== undefined) throw new CliError('--purpose goes with --owner.');
        if (options.owner !== undefined && (options.rateLimit !== undefined || options.days !== String(API_KEY_VALIDITY_DAYS)))
          throw new CliError(
            '--owner issues the key as the account would in the console: --days and --rate-limit are not allowed with it.',
          );
        const owner = options.owner;
        const issued = await withDatabase(
          config,
          async ({ db }) => {
            if (owner === undefined) {
              const days = parseDays(options.days);
              const rateLimit = options.rateLimit ? parseRateLimit(options.rateLimit) : null;
              return new ApiKeyService(db, config.policy).issue({ scopes, days, label: options.label ?? null, rateLimit });
            }
            const account = await new AccountStore(db).findByEmail(owner);
            const standing = account ? await findStanding(db, account._id) : null;
            if (!standing) throw new CliError(`No account ${owner}.`);
            return new ApiKeyService(db, config.policy).request(standing, {
              scopes,
              label: options.label ?? null,
              purpose: options.purpose ?? null,
            });
          },
          WRITES,
        );
        output(options.json, { key: issued.key, ...issued.summary }, () =>
          [`API key (shown once, store it now): ${issued.key}`, describeKey(issued.summary)].join('\n'),
        );
      },
    );

  for (const decision of ['approve', 'refuse'] as const) {
    keys
      .command(`${decision} <id-or-prefix>`)
      .description(
        decision === 'approve'
          ? "approve a key's scopes that await approval: the key works for them at once (written to the access log)"
          : "refuse a key's scopes that await approval: they stay refused, the key keeps its other scopes (written to the access log)",
      )
      .option('--json', 'print the result as JSON')
      .action(async (idOrPrefix: string, options: { json?: boolean }) => {
        const config = cliConfig();
        const decided = await withDatabase(
          config,
          async ({ db }) => {
            const result = await new ApiKeyService(db, config.policy).decide(idOrPrefix, decision === 'approve', null);
            const owner = result.after.ownerAccountId === null ? null : await new AccountStore(db).findById(result.after.ownerAccountId);
            await new AccessAudit(db).record(CLI_ACTOR, {
              action: decision === 'approve' ? 'KEY_SCOPES_APPROVED' : 'KEY_SCOPES_REFUSED',
              target: { kind: 'API_KEY', id: result.after.id, label: `${result.after.prefix}… (${owner?.email ?? 'CLI'})` },
              detail: { scopes: result.decided, purpose: result.after.purpose, before: result.before.scopes, after: result.after.scopes },
            });
            return result;
          },
          WRITES,
        );
        output(
          options.json,
          decided.after,
          () => `${decision === 'approve' ? 'Approved' : 'Refused'} ${decided.decided.join(', ')}: ${describeKey(decided.after)}`,
        );
      });
  }

  keys
    .command('list')
    .description('list keys (prefix, scopes, state, expiry); values are never shown')
    .option('--json', 'print the keys as JSON')
    .action(async (options: { json?: boolean }) => {
      const config = cliConfig();
      const list = await withDatabase(config, ({ db }) => new ApiKeyService(db, config.policy).list());
      output(options.json, list, () => (list.length === 0 ? 'No API keys.' : list.map(describeKey).join('\n')));
    });

  keys
    .command('renew <id-or-prefix>')
    .description('extend a key for another validity period from now (the value stays the same)')
    .option('--days <days>', 'validity in days', String(API_KEY_VALIDITY_DAYS))
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { days: string; json?: boolean }) => {
      const days = parseDays(options.days);
      const config = cliConfig();
      const summary = await withDatabase(config, ({ db }) => new ApiKeyService(db, config.policy).renew(idOrPrefix, days), WRITES);
      output(options.json, summary, () => `Renewed: ${describeKey(summary)}`);
    });

  keys
    .command('rotate <id-or-prefix>')
    .description('issue a new value with the same scopes and limit; the old value stops working now')
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const rotated = await withDatabase(config, ({ db }) => new ApiKeyService(db, config.policy).rotate(idOrPrefix), WRITES);
      output(options.json, { key: rotated.key, ...rotated.summary }, () =>
        [`New API key (shown once, store it now): ${rotated.key}`, describeKey(rotated.summary)].join('\n'),
      );
    });

  keys
    .command('revoke <id-or-prefix>')
    .description('end a key now')
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { json?: boolean }) => {
      const config = cliConfig();
      const summary = await withDatabase(config, ({ db }) => new ApiKeyService(db, config.policy).revoke(idOrPrefix), WRITES);
      output(options.json, summary, () => `Revoked: ${describeKey(summary)}`);
    });
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
