import { z } from 'zod';
import { toCompactDate } from '../calendar.js';

/** The NEIS Open API services this service reads (docs/neis.md). */
export type NeisService = 'mealServiceDietInfo' | 'SchoolSchedule' | 'hisTimetable';

/** One NEIS row: field names as NEIS sends them, values as parsed from its JSON. */
export type NeisRow = Record<string, unknown>;

/** NEIS's maximum page size; larger pages are refused with ERROR-336. */
export const NEIS_MAX_PAGE_SIZE = 1000;

/** A page loop stops here whatever the totals say, so a lying server cannot keep us paging forever. */
const MAX_PAGES = 200;

/**
 * A failed NEIS call. `code` is NEIS's RESULT code (ERROR-290, INFO-300, …) or our own for
 * transport failures (TIMEOUT, NETWORK, HTTP_503, MALFORMED, ABORTED); `transient` says whether
 * trying again may help.
 */
export class NeisError extends Error {
  override name = 'NeisError';
  constructor(
    message: string,
    readonly code: string,
    readonly transient: boolean,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** Progress of a fetch: each page read, each retry. */
export type NeisClientEvent =
  | { type: 'page'; service: NeisService; page: number; pages: number; rows: number; total: number }
  | { type: 'retry'; service: NeisService; page: number; attempt: number; delayMs: number; error: string };

/** Where and how the client calls NEIS. */
export interface NeisClientOptions {
  readonly baseUrl: string;
  /** Sent as KEY when set (NEIS answers keyless callers with sample data only). */
  readonly apiKey?: string | undefined;
  readonly officeCode: string;
  readonly schoolCode: string;
  /** Per request, including reading the body. */
  readonly timeoutMs: number;
  /** Rows per page, at most 1000. */
  readonly pageSize?: number;
  /** Retries after the first attempt of a page, for transient failures only. */
  readonly retries?: number;
  /** Delay before retry `attempt` (1-based); tests inject zero. */
  readonly backoffMs?: (attempt: number) => number;
}

/** Per-call options: cancellation and progress. */
export interface FetchOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: ((event: NeisClientEvent) => void) | undefined;
}

/** Exponential backoff with "equal jitter": half the delay fixed, half random. */
export function exponentialBackoff(baseMs = 500, maxMs = 8000, random: () => number = Math.random): (attempt: number) => number {
  return (attempt) => {
    const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + random() * (ceiling / 2));
  };
}

/** One page of a service: rows plus the total NEIS reports, or "no data" (INFO-200). */
export type NeisPage = { kind: 'rows'; total: number; rows: NeisRow[] } | { kind: 'empty' };

const resultSchema = z.object({ CODE: z.string(), MESSAGE: z.string().optional() });
const headSchema = z.array(z.record(z.string(), z.unknown()));
const rowsSchema = z.array(z.record(z.string(), z.unknown()));

/** RESULT codes after which trying again may succeed: NEIS's own server and database errors. */
const TRANSIENT_CODES = new Set(['ERROR-500', 'ERROR-600']);

/**
 * Reads NEIS's envelope (pure). A page is `{service: [{head: [{list_total_count}, {RESULT}]},
 * {row: [...]}]}`; "no data" and failures are `{RESULT: {CODE, MESSAGE}}` instead.
 */
export function parseEnvelope(service: NeisService, body: unknown): NeisPage {
  if (typeof body !== 'object' || body === null) throw malformed(service, 'the body is not a JSON object');
  const record = body as Record<string, unknown>;
  const sections = record[service];
  if (sections === undefined) {
    const result = resultSchema.safeParse(record['RESULT']);
    if (!result.success) throw malformed(service, `neither "${service}" nor RESULT is present`);
    return fromResultOnly(service, result.data);
  }
  if (!Array.isArray(sections)) throw malformed(service, `"${service}" is not a list`);
  let head: z.infer<typeof headSchema> | undefined;
  let rows: NeisRow[] | undefined;
  for (const section of sections as unknown[]) {
    if (typeof section !== 'object' || section === null) continue;
    const s = section as Record<string, unknown>;
    if ('head' in s) head = headSchema.safeParse(s['head']).data;
    if ('row' in s) rows = rowsSchema.safeParse(s['row']).data;
  }
  const total = head?.find((h) => 'list_total_count' in h)?.['list_total_count'];
  const result = resultSchema.safeParse(head?.find((h) => 'RESULT' in h)?.['RESULT']);
  if (!result.success) throw malformed(service, 'the head has no RESULT');
  if (result.data.CODE !== 'INFO-000') return fromResultOnly(service, result.data);
  if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) throw malformed(service, 'list_total_count is missing');
  if (!rows) throw malformed(service, 'the row list is missing');
  return { kind: 'rows', total, rows };
}

function fromResultOnly(service: NeisService, result: z.infer<typeof resultSchema>): NeisPage {
  if (result.CODE === 'INFO-200') return { kind: 'empty' };
  const message = `NEIS ${service} answered ${result.CODE}${result.MESSAGE ? `: ${result.MESSAGE}` : ''}`;
  throw new NeisError(message, result.CODE, TRANSIENT_CODES.has(result.CODE));
}

function malformed(service: NeisService, why: string): NeisError {
  return new NeisError(`NEIS ${service} sent a malformed answer: ${why}`, 'MALFORMED', false);
}

/**
 * The NEIS Open API client: pages until the reported total is read, tells "no data" from
 * failures, times every request out, and retries transient failures with backoff and jitter.
 * The API key goes only into the request address, never into an error message or a log.
 */
export class NeisClient {
  private readonly pageSize: number;
  private readonly retries: number;
  private readonly backoffMs: (attempt: number) => number;

  constructor(private readonly options: NeisClientOptions) {
    this.pageSize = Math.min(NEIS_MAX_PAGE_SIZE, Math.max(1, options.pageSize ?? NEIS_MAX_PAGE_SIZE));
    this.retries = Math.max(0, options.retries ?? 3);
    this.backoffMs = options.backoffMs ?? exponentialBackoff();
  }

  /** Meals served from `from` to `to` (YYYY-MM-DD, both included). */
  meals(from: string, to: string, options: FetchOptions = {}): Promise<NeisRow[]> {
    return this.fetchAll('mealServiceDietInfo', { MLSV_FROM_YMD: toCompactDate(from), MLSV_TO_YMD: toCompactDate(to) }, options);
  }

  /** Academic calendar events from `from` to `to`. */
  schedules(from: string, to: string, options: FetchOptions = {}): Promise<NeisRow[]> {
    return this.fetchAll('SchoolSchedule', { AA_FROM_YMD: toCompactDate(from), AA_TO_YMD: toCompactDate(to) }, options);
  }

  /** Timetable periods of every class from `from` to `to`. */
  timetables(from: string, to: string, options: FetchOptions = {}): Promise<NeisRow[]> {
    return this.fetchAll('hisTimetable', { TI_FROM_YMD: toCompactDate(from), TI_TO_YMD: toCompactDate(to) }, options);
  }

  /** Every row of a query: pages of up to `pageSize` until `list_total_count` rows are read. */
  async fetchAll(service: NeisService, params: Record<string, string>, options: FetchOptions = {}): Promise<NeisRow[]> {
    const rows: NeisRow[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await this.fetchPage(service, params, page, options);
      if (answer.kind === 'empty') {
        if (page === 1) return rows;
        // Pages ran out before the total: the data changed under us; keep the old rows instead.
        throw new NeisError(`NEIS ${service} ran out of pages after ${rows.length} rows`, 'INCOMPLETE', true);
      }
      rows.push(...answer.rows);
      const pages = Math.max(1, Math.ceil(answer.total / this.pageSize));
      options.onEvent?.({ type: 'page', service, page, pages, rows: rows.length, total: answer.total });
      if (rows.length >= answer.total) return rows;
      if (answer.rows.length === 0) throw malformed(service, `page ${page} is empty before the total was read`);
    }
    throw malformed(service, `more than ${MAX_PAGES} pages`);
  }

  private async fetchPage(service: NeisService, params: Record<string, string>, page: number, options: FetchOptions): Promise<NeisPage> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.request(service, params, page, options.signal);
      } catch (err) {
        const retryable = err instanceof NeisError && err.transient && attempt <= this.retries && !options.signal?.aborted;
        if (!retryable) throw err;
        const delayMs = this.backoffMs(attempt);
        options.onEvent?.({ type: 'retry', service, page, attempt, delayMs, error: err.message });
        await sleep(delayMs, options.signal);
      }
    }
  }

  private async request(
    service: NeisService,
    params: Record<string, string>,
    page: number,
    signal: AbortSignal | undefined,
  ): Promise<NeisPage> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status: number;
    let text: string;
    try {
      const res = await fetch(this.address(service, params, page), { signal: combined, headers: { accept: 'application/json' } });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw new NeisError(`NEIS ${service}: the sync was cancelled`, 'ABORTED', false, { cause: err });
      if (timeout.aborted)
        throw new NeisError(`NEIS ${service} did not answer within ${this.options.timeoutMs} ms`, 'TIMEOUT', true, { cause: err });
      throw new NeisError(`NEIS ${service} could not be reached: ${causeMessage(err)}`, 'NETWORK', true, { cause: err });
    }
    if (status < 200 || status > 299) {
      throw new NeisError(`NEIS ${service} answered HTTP ${status}`, `HTTP_${status}`, status >= 500 || status === 429);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed(service, 'the body is not JSON');
    }
    return parseEnvelope(service, body);
  }

  private address(service: NeisService, params: Record<string, string>, page: number): URL {
    const url = new URL(`${this.options.baseUrl}/${service}`);
    if (this.options.apiKey) url.searchParams.set('KEY', this.options.apiKey);
    url.searchParams.set('Type', 'json');
    url.searchParams.set('pIndex', String(page));
    url.searchParams.set('pSize', String(this.pageSize));
    url.searchParams.set('ATPT_OFCDC_SC_CODE', this.options.officeCode);
    url.searchParams.set('SD_SCHUL_CODE', this.options.schoolCode);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url;
  }
}

/** fetch's own errors hide the reason in `cause` (ECONNREFUSED, …); the address is never shown. */
function causeMessage(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return err instanceof Error ? err.message : String(err);
}

/** Waits `ms`, ending early (rejecting) when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new NeisError('the sync was cancelled', 'ABORTED', false));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
