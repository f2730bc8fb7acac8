import type { Command } from 'commander';
import { ApiKeyService, API_KEY_VALIDITY_DAYS, API_SCOPES, parseScopes, type ApiKeySummary } from '../../data/api-keys.js';
import { rateLimitSpec } from '../../config/index.js';
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
    .option('--json', 'print the result as JSON')
    .action(async (options: { scopes: string; days: string; label?: string; rateLimit?: string; json?: boolean }) => {
      const scopes = parseScopes(options.scopes);
      const days = parseDays(options.days);
      const rateLimit = options.rateLimit ? parseRateLimit(options.rateLimit) : null;
      const issued = await withDatabase(
        cliConfig(),
        ({ db }) => new ApiKeyService(db).issue({ scopes, days, label: options.label ?? null, rateLimit }),
        WRITES,
      );
      output(options.json, { key: issued.key, ...issued.summary }, () =>
        [`API key (shown once, store it now): ${issued.key}`, describeKey(issued.summary)].join('\n'),
      );
    });

  keys
    .command('list')
    .description('list keys (prefix, scopes, state, expiry); values are never shown')
    .option('--json', 'print the keys as JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withDatabase(cliConfig(), ({ db }) => new ApiKeyService(db).list());
      output(options.json, list, () => (list.length === 0 ? 'No API keys.' : list.map(describeKey).join('\n')));
    });

  keys
    .command('renew <id-or-prefix>')
    .description('extend a key for another validity period from now (the value stays the same)')
    .option('--days <days>', 'validity in days', String(API_KEY_VALIDITY_DAYS))
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { days: string; json?: boolean }) => {
      const days = parseDays(options.days);
      const summary = await withDatabase(cliConfig(), ({ db }) => new ApiKeyService(db).renew(idOrPrefix, days), WRITES);
      output(options.json, summary, () => `Renewed: ${describeKey(summary)}`);
    });

  keys
    .command('rotate <id-or-prefix>')
    .description('issue a new value with the same scopes and limit; the old value stops working now')
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { json?: boolean }) => {
      const rotated = await withDatabase(cliConfig(), ({ db }) => new ApiKeyService(db).rotate(idOrPrefix), WRITES);
      output(options.json, { key: rotated.key, ...rotated.summary }, () =>
        [`New API key (shown once, store it now): ${rotated.key}`, describeKey(rotated.summary)].join('\n'),
      );
    });

  keys
    .command('revoke <id-or-prefix>')
    .description('end a key now')
    .option('--json', 'print the result as JSON')
    .action(async (idOrPrefix: string, options: { json?: boolean }) => {
      const summary = await withDatabase(cliConfig(), ({ db }) => new ApiKeyService(db).revoke(idOrPrefix), WRITES);
      output(options.json, summary, () => `Revoked: ${describeKey(summary)}`);
    });
}

function describeKey(k: ApiKeySummary): string {
  const limit = k.rateLimit ? ` limit=${k.rateLimit.points}/${k.rateLimit.durationSeconds}s` : '';
  const label = k.label ? ` "${k.label}"` : '';
  return `${k.id} ${k.prefix}… ${k.state} scopes=${k.scopes.join(',')} expires=${k.expiresAt.toISOString()}${limit}${label}`;
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
