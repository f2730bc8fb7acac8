import { createServer, type Server } from 'node:http';
import { addDays, eachDate, fromCompactDate, todayIn } from '../calendar.js';
import type { NeisRow, NeisService } from './client.js';
import { fakeMealRows, fakeSchool, fakeScheduleRows, fakeTimetableRows } from './fake-fixtures.js';

/**
 * A local stand-in for the NEIS Open API, for tests and the demo: NEIS's envelope, paging and
 * RESULT codes over real HTTP, serving the fixtures of fake-fixtures.ts around an anchor date
 * (today in Asia/Seoul unless given). Tests script failures per service.
 */

/** How the fake answers one request. */
export type FakeBehaviour =
  /** The generated fixtures (the default). */
  | { readonly kind: 'normal' }
  /** These rows instead of the fixtures, paged as NEIS pages. */
  | { readonly kind: 'rows'; readonly rows: readonly NeisRow[] }
  /** A RESULT-only answer with this code (ERROR-290, ERROR-500, INFO-300, INFO-200, …). */
  | { readonly kind: 'result'; readonly code: string; readonly message?: string }
  /** A bare HTTP status with a short text body. */
  | { readonly kind: 'http'; readonly status: number }
  /** The normal answer, after `ms` milliseconds (to provoke client timeouts). */
  | { readonly kind: 'delay'; readonly ms: number }
  /** A 200 whose body is not NEIS JSON. */
  | { readonly kind: 'malformed'; readonly body?: string };

export interface FakeNeisRequest {
  readonly service: string;
  readonly params: Readonly<Record<string, string>>;
}

export interface FakeNeisOptions {
  /** Port to listen on (default: any free port). */
  readonly port?: number;
  /** The date fixtures are served around (default: today in Asia/Seoul). */
  readonly anchor?: string;
  /** Days before and after the anchor with data; outside, NEIS's "no data" (default 400). */
  readonly spanDays?: number;
  /** When set, requests must carry this KEY (else ERROR-290, as NEIS answers a bad key). */
  readonly apiKey?: string;
}

export interface FakeNeis {
  /** Base address to use as NEIS_BASE_URL, e.g. http://127.0.0.1:40123/hub */
  readonly url: string;
  readonly anchor: string;
  /** Every request received, in order. */
  readonly requests: FakeNeisRequest[];
  /** Queues behaviours for the next requests of `service`; then it answers normally again. */
  script(service: NeisService, ...behaviours: FakeBehaviour[]): void;
  /** Sets how `service` answers once its script is used up (undefined: normally). */
  setDefault(service: NeisService, behaviour: FakeBehaviour | undefined): void;
  /** Forgets requests, scripts and defaults. */
  reset(): void;
  close(): Promise<void>;
}

const SERVICES: readonly NeisService[] = ['mealServiceDietInfo', 'SchoolSchedule', 'hisTimetable'];

/** Date parameters of each service: one day, or a from/to range. */
const DATE_PARAMS: Readonly<Record<NeisService, { day: string; from: string; to: string }>> = {
  mealServiceDietInfo: { day: 'MLSV_YMD', from: 'MLSV_FROM_YMD', to: 'MLSV_TO_YMD' },
  SchoolSchedule: { day: 'AA_YMD', from: 'AA_FROM_YMD', to: 'AA_TO_YMD' },
  hisTimetable: { day: 'ALL_TI_YMD', from: 'TI_FROM_YMD', to: 'TI_TO_YMD' },
};

const MESSAGES: Readonly<Record<string, string>> = {
  'INFO-000': '정상 처리되었습니다.',
  'INFO-200': '해당하는 데이터가 없습니다.',
  'INFO-300': '관리자에 의해 인증키 사용이 제한되었습니다.',
  'ERROR-290': '인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.',
  'ERROR-300': '필수 값이 누락되어 있습니다. 요청인자를 참고 하십시오.',
  'ERROR-310': '해당하는 서비스를 찾을 수 없습니다. 요청인자 중 SERVICE를 확인하십시오.',
  'ERROR-333': '요청위치 값의 타입이 유효하지 않습니다.요청위치 값은 정수를 입력하세요.',
  'ERROR-336': '데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다.',
  'ERROR-337': '일별 트래픽 제한을 넘은 호출입니다. 오늘은 더이상 호출할 수 없습니다.',
  'ERROR-500': '서버 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다.',
  'ERROR-600': '데이터베이스 연결 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다.',
};

/** Starts the fake on 127.0.0.1. */
export async function startFakeNeis(options: FakeNeisOptions = {}): Promise<FakeNeis> {
  const anchor = options.anchor ?? todayIn('Asia/Seoul', new Date());
  const span = options.spanDays ?? 400;
  const window = { from: addDays(anchor, -span), to: addDays(anchor, span) };
  const requests: FakeNeisRequest[] = [];
  const scripts = new Map<NeisService, FakeBehaviour[]>();
  const defaults = new Map<NeisService, FakeBehaviour>();
  const pending = new Set<NodeJS.Timeout>();

  const nextBehaviour = (service: NeisService): FakeBehaviour =>
    scripts.get(service)?.shift() ?? defaults.get(service) ?? { kind: 'normal' };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const service = url.pathname.replace(/^\/hub\//, '');
    const params = Object.fromEntries(url.searchParams);
    requests.push({ service, params });
    const send = (status: number, body: string, type = 'application/json;charset=UTF-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (!isService(service)) return send(200, resultOnly('ERROR-310'));
    const behaviour = nextBehaviour(service);
    if (behaviour.kind === 'delay') {
      const timer = setTimeout(() => {
        pending.delete(timer);
        if (!res.destroyed) answer(service, params, { kind: 'normal' }, send);
      }, behaviour.ms);
      pending.add(timer);
      return;
    }
    answer(service, params, behaviour, send);
  });

  function answer(
    service: NeisService,
    params: Record<string, string>,
    behaviour: FakeBehaviour,
    send: (status: number, body: string, type?: string) => void,
  ): void {
    if (behaviour.kind === 'http') return send(behaviour.status, `HTTP ${behaviour.status}`, 'text/plain');
    if (behaviour.kind === 'malformed')
      return send(200, behaviour.body ?? '<html><body>Service Temporarily Unavailable</body></html>', 'text/html');
    if (behaviour.kind === 'result') return send(200, resultOnly(behaviour.code, behaviour.message));
    if (options.apiKey && params['KEY'] !== options.apiKey) return send(200, resultOnly('ERROR-290'));
    if (params['Type'] !== 'json' || !params['ATPT_OFCDC_SC_CODE'] || !params['SD_SCHUL_CODE']) return send(200, resultOnly('ERROR-300'));
    const pIndex = Number(params['pIndex'] ?? '1');
    const pSize = Number(params['pSize'] ?? '100');
    if (!Number.isInteger(pIndex) || !Number.isInteger(pSize) || pIndex < 1 || pSize < 1) return send(200, resultOnly('ERROR-333'));
    if (pSize > 1000) return send(200, resultOnly('ERROR-336'));
    const all = behaviour.kind === 'rows' ? [...behaviour.rows] : generate(service, params);
    const rows = all.slice((pIndex - 1) * pSize, pIndex * pSize);
    if (rows.length === 0) return send(200, resultOnly('INFO-200'));
    send(200, JSON.stringify({ [service]: [{ head: [{ list_total_count: all.length }, { RESULT: result('INFO-000') }] }, { row: rows }] }));
  }

  /** The fixtures for a query: every date of its range inside the served window. */
  function generate(service: NeisService, params: Record<string, string>): NeisRow[] {
    const names = DATE_PARAMS[service];
    const day = fromCompactDate(params[names.day] ?? '');
    const from = day ?? fromCompactDate(params[names.from] ?? '') ?? window.from;
    const to = day ?? fromCompactDate(params[names.to] ?? '') ?? window.to;
    const first = from > window.from ? from : window.from;
    const last = to < window.to ? to : window.to;
    if (first > last) return [];
    const school = fakeSchool(params['ATPT_OFCDC_SC_CODE'] ?? '', params['SD_SCHUL_CODE'] ?? '');
    const grade = Number(params['GRADE']) || undefined;
    const classNum = Number(params['CLASS_NM']) || undefined;
    return eachDate(first, last).flatMap((date) => {
      if (service === 'mealServiceDietInfo') return fakeMealRows(school, date, anchor);
      if (service === 'SchoolSchedule') return fakeScheduleRows(school, date);
      return fakeTimetableRows(school, date, grade, classNum);
    });
  }

  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', () => done()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}/hub`,
    anchor,
    requests,
    script(service, ...behaviours) {
      scripts.set(service, [...(scripts.get(service) ?? []), ...behaviours]);
    },
    setDefault(service, behaviour) {
      if (behaviour) defaults.set(service, behaviour);
      else defaults.delete(service);
    },
    reset() {
      requests.length = 0;
      scripts.clear();
      defaults.clear();
    },
    async close() {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function isService(name: string): name is NeisService {
  return (SERVICES as readonly string[]).includes(name);
}

function result(code: string, message?: string): { CODE: string; MESSAGE: string } {
  return { CODE: code, MESSAGE: message ?? MESSAGES[code] ?? '' };
}

function resultOnly(code: string, message?: string): string {
  return JSON.stringify({ RESULT: result(code, message) });
}
