import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs the real `campus` command (from source) as a child process. `env` is added to the
 * test's environment; with `clean` it replaces it entirely.
 */
export async function runCampus(env: Record<string, string>, args: string[], options: { clean?: boolean } = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: options.clean ? env : { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}
