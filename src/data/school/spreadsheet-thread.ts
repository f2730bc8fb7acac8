import { Worker } from 'node:worker_threads';
import type { ReadResult } from './spreadsheet.js';
import type { ReadAnswer, ReadJob } from './spreadsheet-worker.js';

/*
 * Uploaded spreadsheets are read off the main thread, in one worker thread with its own memory
 * limits (./spreadsheet-worker.ts): a file that slips past the unpacking and column caps of
 * ./spreadsheet.ts and still needs too much memory or time ends that worker, and the file is
 * refused (READ_LIMIT) while the process keeps serving. The worker is kept between files (a
 * 1,000-row import does not pay its start again) and does not keep the process alive when idle.
 */

export const READ_LIMITS = {
  /** The worker's JavaScript heap (V8 old generation); a 20,000-row workbook needs well under it. */
  heapMb: 512,
  /** How long one file may take to read. */
  timeMs: 60_000,
} as const;

/** Under tsx (tests, development) this module is TypeScript, and so is its worker. */
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './spreadsheet-worker.ts' : './spreadsheet-worker.js', import.meta.url);

let worker: Worker | null = null;
let nextId = 1;
/** Files are read one after another: one worker's limits bound the work of all of them. */
let queue: Promise<unknown> = Promise.resolve();

/** Reads a file's sheets in the worker thread; see readSpreadsheet for what it refuses. */
export function readSpreadsheetApart(bytes: Buffer, maxColumns: number): Promise<ReadResult> {
  const read = queue.then(() => readInWorker(bytes, maxColumns));
  queue = read.catch(() => undefined);
  return read;
}

/**
 * Starts the worker now, so that its start (loading exceljs) overlaps other work: `campus import`
 * calls it before connecting to the database. Reading starts it anyway when it is not running.
 */
export function warmSpreadsheetReader(): void {
  worker ??= startWorker();
}

function startWorker(): Worker {
  const started = new Worker(WORKER_URL, {
    execArgv: WORKER_URL.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [],
    resourceLimits: { maxOldGenerationSizeMb: READ_LIMITS.heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
  });
  started.unref();
  const forget = (): void => {
    if (worker === started) worker = null;
  };
  started.once('exit', forget);
  started.once('error', forget);
  return started;
}

function readInWorker(bytes: Buffer, maxColumns: number): Promise<ReadResult> {
  const current = (worker ??= startWorker());
  const id = nextId++;
  return new Promise<ReadResult>((resolve) => {
    const finish = (result: ReadResult): void => {
      clearTimeout(timer);
      current.off('message', onMessage).off('error', onFailure).off('exit', onFailure);
      current.unref();
      resolve(result);
    };
    const onMessage = (answer: ReadAnswer): void => {
      if (answer.id === id) finish(answer.result);
    };
    // Out of memory (ERR_WORKER_OUT_OF_MEMORY), or the worker ended: the file is refused.
    const onFailure = (): void => finish(limitReached());
    const timer = setTimeout(() => {
      void current.terminate();
      finish(limitReached());
    }, READ_LIMITS.timeMs);
    current.on('message', onMessage).once('error', onFailure).once('exit', onFailure);
    current.ref();
    current.postMessage({ id, bytes, maxColumns } satisfies ReadJob);
  });
}

function limitReached(): ReadResult {
  if (worker) void worker.terminate();
  worker = null;
  return { ok: false, code: 'READ_LIMIT', params: { memory: `${READ_LIMITS.heapMb} MB`, seconds: READ_LIMITS.timeMs / 1000 } };
}
