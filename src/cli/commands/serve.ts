import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { SURFACE_NAMES, type SurfaceName } from '../../surfaces/types.js';
import { CliError, cliConfig } from '../runtime.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the service (PORT, default 8080; HOST, default 127.0.0.1)')
    .option('--only <surfaces>', `serve only these surfaces, comma-separated: ${SURFACE_NAMES.join(', ')}`)
    .option('--json', 'print the start-up line as JSON')
    .action(async (options: { only?: string; json?: boolean }) => {
      const config = cliConfig();
      const surfaces = options.only ? parseSurfaces(options.only) : undefined;
      const logger = createLogger(config.logLevel);
      // Loaded here, not at the top: every other command starts without the app's modules.
      const { startService } = await import('../../main.js');
      const service = await startService(config, logger, surfaces).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
          throw new CliError(`Cannot listen on ${config.host}:${config.port} (${err.code}); choose another PORT or HOST.`);
        }
        throw err;
      });
      const served = surfaces ?? SURFACE_NAMES;
      const runtime = `Node.js ${process.version}`;
      if (options.json) process.stdout.write(`${JSON.stringify({ url: service.url, surfaces: served, runtime })}\n`);
      else logger.info({ url: service.url, surfaces: served, runtime }, `listening on ${service.url} (${runtime})`);
      const stop = () => {
        void service.stop().then(() => process.exit(0));
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
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
