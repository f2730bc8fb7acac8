import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate } from './tls.js';

/** The documented site configuration (docs/operations.md includes it): what production runs, and what the tests run. */
export const SITE_CONFIG = 'deploy/nginx/campus.conf';

/** The ports and paths of the site configuration that a test replaces; nothing else of it changes. */
const PRODUCTION = {
  upstreams: ['127.0.0.1:8080', '127.0.0.1:8081'],
  http: 'listen 80;',
  https: 'listen 443 ssl;',
  certificate: '/etc/letsencrypt/live/campus.school.example/fullchain.pem',
  key: '/etc/letsencrypt/live/campus.school.example/privkey.pem',
} as const;

/** Debian's nginx (`apt-get install nginx`), when this machine has it: /usr/sbin is not on every user's PATH. */
export function nginxBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).stdout.trim();
  if (found) return found;
  return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : undefined;
}

export interface RunningNginx {
  /** The TLS address, e.g. https://127.0.0.1:41234. */
  readonly url: string;
  /** The self-signed certificate it presents (PEM), for a client to trust. */
  readonly ca: string;
  /** Its error log so far (every upstream failure it saw is a line). */
  errorLog(): string;
  stop(): Promise<void>;
}

/**
 * Runs nginx as a plain process of the test, in a directory of its own (configuration, pid, logs,
 * temporary files, a self-signed certificate), with the site configuration `site` (default: the
 * documented one) whose upstreams, listening ports and certificate paths are replaced, and
 * nothing else. Waits until it accepts connections.
 */
export async function startNginx(options: {
  upstreamPorts: readonly [number, number];
  httpPort: number;
  httpsPort: number;
  site?: string | undefined;
}): Promise<RunningNginx> {
  const binary = nginxBinary();
  if (!binary) throw new Error('nginx is not installed (Debian: apt-get install nginx)');
  const dir = mkdtempSync(join(tmpdir(), 'campus-nginx-'));
  // Run as root, nginx's workers drop to `nobody`, which must reach the files in here.
  chmodSync(dir, 0o755);
  const certificate = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const made = await selfSignedCertificate('127.0.0.1');
  writeFileSync(certificate, made.cert);
  writeFileSync(key, made.key);
  chmodSync(key, 0o644);

  const [first, second] = options.upstreamPorts;
  const site = replaceEach(readFileSync(options.site ?? SITE_CONFIG, 'utf8'), [
    [PRODUCTION.upstreams[0], `127.0.0.1:${first}`],
    [PRODUCTION.upstreams[1], `127.0.0.1:${second}`],
    [PRODUCTION.http, `listen 127.0.0.1:${options.httpPort};`],
    [PRODUCTION.https, `listen 127.0.0.1:${options.httpsPort} ssl;`],
    [PRODUCTION.certificate, certificate],
    [PRODUCTION.key, key],
  ]);
  writeFileSync(join(dir, 'campus.conf'), site);
  // What Debian's /etc/nginx/nginx.conf would give the site, with every path in this directory.
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 2;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      `  access_log off;`,
      `  client_body_temp_path ${join(dir, 'client_body')};`,
      `  proxy_temp_path ${join(dir, 'proxy')};`,
      `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `  scgi_temp_path ${join(dir, 'scgi')};`,
      `  include ${join(dir, 'campus.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  try {
    await waitForPort(options.httpsPort, child);
  } catch (err) {
    child.kill('SIGTERM');
    await exited;
    const log = errorLog();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx did not start: ${(err as Error).message}\n${stderr}${log}`, { cause: err });
  }
  return {
    url: `https://127.0.0.1:${options.httpsPort}`,
    ca: readFileSync(certificate, 'utf8'),
    errorLog,
    async stop() {
      // SIGQUIT: nginx's graceful stop, as `nginx -s quit` sends it.
      child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Replaces each `[from, to]`, each `from` occurring exactly once: a changed site file fails here instead of running half replaced. */
function replaceEach(text: string, pairs: readonly (readonly [string, string])[]): string {
  return pairs.reduce((result, [from, to]) => {
    const count = result.split(from).length - 1;
    if (count !== 1) throw new Error(`${SITE_CONFIG} holds "${from}" ${count} times; the test replaces it once`);
    return result.replace(from, () => to);
  }, text);
}

/** Resolves once something accepts connections on `port`; rejects when `child` exits first or after 10 s. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`it exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on port ${port} after 10 s`);
}
