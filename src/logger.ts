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
 * Stdout is written asynchronously in batches, so a log line never blocks a request; the
 * batch is flushed at least every second (and when the process exits), so logs never lag.
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
    destination ?? bufferedStdout(),
  );
}

/** An asynchronous, batched stdout that is flushed every second. */
export function bufferedStdout(): DestinationStream {
  const stream = pinoDestination({ dest: 1, sync: false, minLength: 8192 });
  const timer = setInterval(() => {
    // flush() throws while the stream is still opening; the next tick will do.
    try {
      stream.flush();
    } catch {
      /* not ready yet */
    }
  }, 1000);
  timer.unref();
  return stream;
}
