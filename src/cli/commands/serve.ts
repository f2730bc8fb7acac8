import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { createLogger } from '../../logger.js';
import { SURFACE_NAMES, type SurfaceName } from '../../surfaces/types.js';
import { CliError, cliConfig, jsonOption, logLevelOf, progress } from '../runtime.js';

export function registerServe(program: Command): void {
  // Not a jsonCommand: its answer is one JSON line (not pretty), and it stays running after it.
  jsonOption(
    program
      .command('serve')
      .description('start the service (PORT, default 8080; HOST, default 127.0.0.1)')
      .option('--only <surfaces>', `serve only these surfaces, comma-separated: ${SURFACE_NAMES.join(', ')}`),
    'the start-up line',
  ).action(async (options: { only?: string; json?: boolean }) => {
    const config = cliConfig();
    const surfaces = options.only ? parseSurfaces(options.only) : undefined;
    const level = logLevelOf(config, 'serve');
    const logger = createLogger(level);
    // Loaded here, not at the top: every other command starts without the app's modules.
    const { startService } = await import('../../main.js');
    // Without logs, the start-up's long work (the embedded database's first build) shows as lines of its own.
    const started = startService(config, logger, { surfaces, ...(level === 'silent' ? { progress } : {}) });
    const service = await started.catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
        throw new CliError(`Cannot listen on ${config.host}:${config.port} (${err.code}); choose another PORT or HOST.`);
      }
      throw err;
    });
    const served = surfaces ?? SURFACE_NAMES;
    const runtime = `Node.js ${process.version}`;
    const addresses = addressesOf(config, served);
    logger.info({ url: service.url, surfaces: served, runtime }, `listening on ${service.url} (${runtime})`);
    if (options.json) process.stdout.write(`${JSON.stringify({ url: service.url, surfaces: served, runtime, addresses })}\n`);
    else process.stdout.write(startupLines(service.url, served, runtime, addresses, level));
    // The first signal drains (src/main.ts), a second one ends the drain at once; either way the
    // process exits 0 once requests in flight are answered and the workers stopped.
    const stop = () => {
      void service.stop().then(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

/** Where a person finds what this process serves (the pages with the authorization server, the docs with the data API). */
function addressesOf(config: Config, served: readonly SurfaceName[]): Record<string, string> {
  return {
    ...(served.includes('auth')
      ? { frontPage: `${config.urls.auth}/`, developerConsole: `${config.urls.auth}/console`, adminConsole: `${config.urls.auth}/admin` }
      : {}),
    ...(served.includes('data') ? { apiReference: `${config.urls.base}/docs`, health: `${config.urls.base}/v1/health` } : {}),
    ...(served.includes('userinfo') ? { userinfo: `${config.urls.userinfo}/userinfo` } : {}),
  };
}

const ADDRESS_NAMES: Readonly<Record<string, string>> = {
  frontPage: 'Front page',
  developerConsole: 'Developer console',
  adminConsole: 'Admin console',
  apiReference: 'API reference',
  health: 'Health',
  userinfo: 'Userinfo',
};

/** The start-up as people read it: where it listens, where everything is, how to see logs and stop. */
function startupLines(
  url: string,
  served: readonly SurfaceName[],
  runtime: string,
  addresses: Record<string, string>,
  level: string,
): string {
  const width = Math.max(...Object.keys(addresses).map((k) => (ADDRESS_NAMES[k] ?? k).length));
  return [
    `campus serve: listening on ${url} (${served.join(', ')}; ${runtime})`,
    ...Object.entries(addresses).map(([key, address]) => `  ${(ADDRESS_NAMES[key] ?? key).padEnd(width)}  ${address}`),
    level === 'silent' ? 'Logs are off: add --verbose or set LOG_LEVEL=info to see them. Stop with Ctrl+C.' : 'Stop with Ctrl+C.',
    '',
  ].join('\n');
}

function parseSurfaces(value: string): SurfaceName[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SURFACE_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new CliError(`--only: unknown surface ${unknown.join(', ') || '(none)'}; use ${SURFACE_NAMES.join(', ')}.`);
  }
  return names as SurfaceName[];
}
