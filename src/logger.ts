import { openSync } from 'node:fs';
import { pino, destination as pinoDestination, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may hold a secret anywhere in a log object. Redaction is the safety net; the code
 * also never passes request bodies, query strings of OAuth endpoints or headers to the logger.
 */
const REDACT_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'clientSecret',
  '*.clientSecret',
  'client_secret',
  '*.client_secret',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'token',
  '*.token',
  'code',
  '*.code_verifier',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
];

/**
 * Creates the service logger: structured JSON on stdout (or the given stream, for tests).
 * Stdout is written in batches (see batchedDestination), so a log line never blocks a request.
 * Times are epoch milliseconds (`time`), the cheapest form to write on every request.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'campus-data-service' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? stdoutDestination(),
  );
}

let stdout: BatchedDestination | undefined;

/** One batched stdout per process, however many loggers write to it. */
function stdoutDestination(): BatchedDestination {
  return (stdout ??= batchedDestination(1));
}

/** A log destination that can be emptied synchronously (at exit). */
export interface BatchedDestination extends DestinationStream {
  flushSync(): void;
}

/**
 * Writes log lines to a file descriptor (or appends to a file) in batches. A line costs an array
 * push; every `intervalMs`, or once 64 KiB wait, the batch is joined and handed to an
 * asynchronous sonic-boom writer. Collecting in an array matters on the hot path: appending to
 * one growing string makes sonic-boom measure the whole buffer again on every line. Whatever is
 * pending is written synchronously at exit.
 */
export function batchedDestination(target: number | string, intervalMs = 100): BatchedDestination {
  // Opened here, synchronously, so even a process that exits at once can flush what it logged.
  const fd = typeof target === 'number' ? target : openSync(target, 'a');
  const out = pinoDestination({ dest: fd, sync: false });
  let pending: string[] = [];
  let pendingChars = 0;
  const drain = (): void => {
    if (pending.length === 0) return;
    const batch = pending.join('');
    pending = [];
    pendingChars = 0;
    out.write(batch);
  };
  const timer = setInterval(drain, intervalMs);
  timer.unref();
  const flushSync = (): void => {
    drain();
    // At exit a failing write (a closed pipe) must not turn a clean exit into a crash.
    try {
      out.flushSync();
    } catch {
      /* nothing more can be done with these lines */
    }
  };
  // Before pino's own exit hook ends the writer, so the last lines are not lost.
  process.prependListener('exit', flushSync);
  return {
    write(line: string) {
      pending.push(line);
      pendingChars += line.length;
      if (pendingChars >= 65536) drain();
    },
    flushSync,
  };
}
