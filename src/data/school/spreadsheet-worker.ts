import { parentPort } from 'node:worker_threads';
import { readSpreadsheet, type ReadResult } from './spreadsheet.js';

/*
 * The worker thread that reads uploaded spreadsheets (started by ./spreadsheet-thread.ts), so
 * that a file made to exhaust memory ends this thread, not the process serving requests.
 */

/** A file to read, as the parent posts it. */
export interface ReadJob {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly maxColumns: number;
}

/** The answer to a job. */
export interface ReadAnswer {
  readonly id: number;
  readonly result: ReadResult;
}

parentPort?.on('message', (job: ReadJob) => {
  void answer(job).then((result) => parentPort?.postMessage({ id: job.id, result } satisfies ReadAnswer));
});

async function answer(job: ReadJob): Promise<ReadResult> {
  try {
    return await readSpreadsheet(Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength), job.maxColumns);
  } catch (err) {
    return {
      ok: false,
      code: 'UNREADABLE',
      params: { format: 'spreadsheet', detail: err instanceof Error ? err.message.slice(0, 200) : 'malformed' },
    };
  }
}
