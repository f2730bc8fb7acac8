import { freePort } from '../../src/data/platform/embedded/index.js';
import { runCampus, startCampus, type RunningCampus } from './cli.js';
import { testDatabaseUri } from './database.js';

/** A real `campus serve` on the demo school (`campus seed --demo`), in a database of its own on the suite's server. */
export interface ServedDemo {
  /** Where it listens, e.g. http://127.0.0.1:41234 (data, auth and userinfo on one address). */
  readonly url: string;
  /** Its database, for `campus` commands next to it. */
  readonly uri: string;
  readonly process: RunningCampus;
  /** Runs `campus <args>` against its database; throws on a non-zero exit; stdout. */
  campus(args: string[], stdin?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function serveDemo(name: string, env: Record<string, string> = {}): Promise<ServedDemo> {
  const uri = testDatabaseUri(name);
  const campus = async (args: string[], stdin?: string) => {
    const result = await runCampus({ MONGODB_URI: uri, ...env }, args, stdin === undefined ? {} : { stdin });
    if (result.code !== 0) throw new Error(`campus ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  await campus(['seed', '--demo']);
  const port = await freePort();
  const process = await startCampus({ MONGODB_URI: uri, HOST: '127.0.0.1', PORT: String(port), NEIS_SYNC_ENABLED: 'false', ...env }, [
    'serve',
    '--json',
  ]);
  const { url } = JSON.parse(process.firstLine) as { url: string };
  return {
    url,
    uri,
    process,
    campus,
    async stop() {
      await process.stop();
    },
  };
}

/** A machine app registered on a served demo (`campus clients create`): the client_credentials grant with `dataScopes` (comma-separated). */
export async function registerMachineApp(
  served: ServedDemo,
  name: string,
  dataScopes: string,
): Promise<{ id: string; clientSecret: string }> {
  const created = await served.campus([
    'clients',
    'create',
    '--name',
    name,
    '--grant',
    'client_credentials',
    '--data-scope',
    dataScopes,
    '--json',
  ]);
  return JSON.parse(created) as { id: string; clientSecret: string };
}
