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
 * test's environment; with `clean` it replaces it entirely; `stdin` is its standard input.
 */
export async function runCampus(
  env: Record<string, string>,
  args: string[],
  options: { clean?: boolean; stdin?: string } = {},
): Promise<CliResult> {
  try {
    const running = run(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: options.clean ? env : { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    running.child.stdin?.end(options.stdin ?? '');
    const { stdout, stderr } = await running;
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}
