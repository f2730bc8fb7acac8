import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { generateCookieKey, generateJwks, parseJwks } from '../../oauth/signing-keys.js';
import { CliError, jsonOption, output } from '../runtime.js';

/** The production secrets: the OAuth signing keys and the cookie keys. */
interface Secrets {
  OAUTH_JWKS: string;
  OAUTH_COOKIE_KEYS: string;
}

/**
 * `campus secrets generate|rotate|retire`: the values production needs, printed ready to paste
 * into the environment (or written, mode 0600, to a file that does not exist yet). In both
 * variables the first key signs and every key verifies, so rotation is: `rotate` (a new key first,
 * the old ones kept), deploy; once every token the old key signed has expired, `retire`, deploy.
 */
export function registerSecrets(program: Command): void {
  const secrets = program.command('secrets').description('generate and rotate the OAuth signing keys and cookie keys of production');

  // They need no configuration: `generate` makes what production's configuration lacks.
  const command = (name: string, description: string) =>
    jsonOption(
      secrets
        .command(name)
        .description(description)
        .option('--out <file>', 'write them to this new file (mode 0600) instead of printing them'),
      'them',
    );

  command('generate', 'print fresh OAUTH_JWKS (an RS256 private key with a kid) and OAUTH_COOKIE_KEYS').action(
    async (options: SecretsOptions) => {
      await emit({ OAUTH_JWKS: await generateJwks(), OAUTH_COOKIE_KEYS: generateCookieKey() }, options);
    },
  );

  command(
    'rotate',
    'print OAUTH_JWKS and OAUTH_COOKIE_KEYS of this environment with a new key first (it signs; the old ones still verify)',
  ).action(async (options: SecretsOptions) => {
    const current = currentSecrets();
    const fresh = JSON.parse(await generateJwks()) as { keys: unknown[] };
    await emit(
      {
        OAUTH_JWKS: JSON.stringify({ keys: [...fresh.keys, ...current.jwks] }),
        OAUTH_COOKIE_KEYS: [generateCookieKey(), ...current.cookieKeys].join(','),
      },
      options,
    );
  });

  command('retire', 'print OAUTH_JWKS and OAUTH_COOKIE_KEYS of this environment with only their first (signing) key').action(
    async (options: SecretsOptions) => {
      const current = currentSecrets();
      await emit(
        { OAUTH_JWKS: JSON.stringify({ keys: current.jwks.slice(0, 1) }), OAUTH_COOKIE_KEYS: current.cookieKeys.slice(0, 1).join(',') },
        options,
      );
    },
  );
}

interface SecretsOptions {
  out?: string;
  json?: boolean;
}

/** The keys this environment holds now (rotate and retire start from them). */
function currentSecrets(): { jwks: unknown[]; cookieKeys: string[] } {
  const jwksText = process.env['OAUTH_JWKS'];
  const cookieText = process.env['OAUTH_COOKIE_KEYS'];
  if (!jwksText || !cookieText) {
    throw new CliError('OAUTH_JWKS and OAUTH_COOKIE_KEYS must be set: rotate and retire start from the keys of this environment.');
  }
  let jwks: unknown[];
  try {
    jwks = parseJwks(jwksText);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  return {
    jwks,
    cookieKeys: cookieText
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
  };
}

/** Prints the secrets (shell lines or JSON), or writes them to a new file that only its owner reads. */
async function emit(values: Secrets, options: SecretsOptions): Promise<void> {
  const text = `OAUTH_JWKS='${values.OAUTH_JWKS}'\nOAUTH_COOKIE_KEYS=${values.OAUTH_COOKIE_KEYS}\n`;
  if (!options.out) {
    output(options.json, values, () => text.trimEnd());
    return;
  }
  try {
    // 'wx': never overwrite (a mistyped path must not destroy keys in use).
    await writeFile(options.out, options.json ? `${JSON.stringify(values, null, 2)}\n` : text, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EEXIST' ? `${options.out} exists; choose a new file.` : `Cannot write ${options.out}: ${(err as Error).message}`,
    );
  }
  output(options.json, { file: options.out }, () => `Wrote OAUTH_JWKS and OAUTH_COOKIE_KEYS to ${options.out} (mode 0600).`);
}
