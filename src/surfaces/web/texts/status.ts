import {
  MAX_INCIDENT_MESSAGE,
  MAX_INCIDENT_TITLE,
  type IncidentKind,
  type IncidentProblem,
  type IncidentState,
} from '../../../data/operations/incidents.js';
import type { StatusPart } from '../../../data/operations/status-parts.js';
import type { CheckReason, PartState } from '../../../data/operations/status.js';
import type { NeisDataset } from '../../../data/models/neis-state.model.js';
import { plural } from '../../../plural.js';
import { n } from './number.js';

/*
 * The status page (/status, src/surfaces/web/status.ts) and its admin page (/admin/status,
 * src/surfaces/admin/status.ts), Korean and English. Kept apart from ko.ts / en.ts, which include
 * them as `status` and `admin.status`.
 */

const percent = (share: number, locale: string) =>
  new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: share === 1 ? 0 : 2 }).format(share);

/** A time span in Korean words: `40초`, `5분`, `3시간`, `2일`. */
function spanKo(seconds: number): string {
  if (seconds < 60) return `${n(seconds, 'ko-KR')}초`;
  if (seconds < 3600) return `${n(Math.floor(seconds / 60), 'ko-KR')}분`;
  if (seconds < 86400) return `${n(Math.floor(seconds / 3600), 'ko-KR')}시간`;
  return `${n(Math.floor(seconds / 86400), 'ko-KR')}일`;
}

/** A time span in English words: `40 seconds`, `1 minute`, `3 hours`, `2 days`. */
function spanEn(seconds: number): string {
  const unit = (value: number, one: string) => plural('en-US', value, { one: `# ${one}`, other: `# ${one}s` });
  if (seconds < 60) return unit(seconds, 'second');
  if (seconds < 3600) return unit(Math.floor(seconds / 60), 'minute');
  if (seconds < 86400) return unit(Math.floor(seconds / 3600), 'hour');
  return unit(Math.floor(seconds / 86400), 'day');
}

export const statusKo = {
  title: '서비스 상태',
  lead: (school: string) =>
    `${school} 캠퍼스 데이터 서비스의 각 부분이 지금 작동하는지, 지난 90일 동안 얼마나 작동했는지, 장애와 점검 소식을 알려 드립니다. 서비스가 1분마다 스스로 확인해 기록합니다.`,
  overall: { UP: '모든 부분이 정상입니다', DEGRADED: '일부가 느리거나 불안정합니다', DOWN: '일부가 작동하지 않습니다' } satisfies Record<
    Exclude<PartState, 'OFF'>,
    string
  >,
  states: { UP: '정상', DEGRADED: '성능 저하', DOWN: '중단', OFF: '꺼짐' } satisfies Record<PartState, string>,
  parts: {
    'data-api': { name: '데이터 API', hint: '학생·동아리·프로젝트·급식·학사일정·시간표를 읽는 /v1 API' },
    'sign-in': { name: '로그인과 토큰', hint: '"학교 계정으로 로그인", 인증 코드와 토큰 발급' },
    userinfo: { name: '사용자 정보', hint: '앱이 토큰으로 로그인한 사람을 읽는 /userinfo' },
    database: { name: '데이터베이스', hint: '모든 기록이 있는 곳' },
    redis: { name: 'Redis', hint: '여러 프로세스가 함께 쓰는 요청 한도와 변경 알림' },
    neis: { name: 'NEIS 동기화', hint: '나이스에서 가져오는 급식·학사일정·시간표' },
    webhooks: { name: '웹훅 전송', hint: '변경 이벤트를 앱의 서버로 보내는 일' },
  } satisfies Record<StatusPart, { name: string; hint: string }>,
  partsTitle: '부분별 상태',
  checkedAt: (when: string) => `${when} 확인`,
  latency: (ms: number) => `응답 ${n(ms, 'ko-KR')}ms`,
  reasons: {
    TIMEOUT: '제때 응답하지 않음',
    UNREACHABLE: '연결할 수 없음',
    SLOW: '느림',
  } satisfies Record<CheckReason, string>,
  availability90: (share: number) => `지난 90일 가용률 ${percent(share, 'ko-KR')}`,
  noHistory: '아직 기록이 없습니다.',
  historyAsOf: (when: string) => `데이터베이스에 연결할 수 없어 ${when}에 읽은 기록을 보여 드립니다.`,
  barsLabel: '지난 90일 (왼쪽이 오래된 날)',
  days: (amiss: number, recorded: number) => `문제가 있었던 날 ${n(amiss, 'ko-KR')}일 (기록된 ${n(recorded, 'ko-KR')}일 가운데)`,
  dayColumns: ['날짜', '가용률', '중단', '성능 저하'],
  minutes: (count: number) => `${n(count, 'ko-KR')}분`,
  dayTitle: (date: string, availability: string) => `${date}: ${availability}`,
  dayNone: (date: string) => `${date}: 기록 없음`,
  percent: (share: number) => percent(share, 'ko-KR'),
  neis: {
    datasets: { meals: '급식', schedules: '학사일정', timetables: '시간표' } satisfies Record<NeisDataset, string>,
    synced: (when: string, age: number) => `${when} 동기화 (${spanKo(age)} 전 데이터)`,
    never: '아직 동기화한 적 없음',
    lastFailed: '마지막 시도 실패',
    off: '자동 동기화가 꺼져 있습니다 (NEIS_SYNC_ENABLED, NEIS_API_KEY).',
  },
  webhooks: {
    backlog: (count: number) => `보낼 이벤트 ${n(count, 'ko-KR')}건`,
    oldest: (age: number) => `가장 오래 기다린 것 ${spanKo(age)}`,
    waitingOnReceivers: (retrying: number, failing: number) =>
      `받는 서버가 응답하지 않아 다시 보낼 웹훅 ${n(retrying, 'ko-KR')}개, 멈춘 웹훅 ${n(failing, 'ko-KR')}개 (앱 쪽 문제)`,
  },
  rolloverUnderWay: (kind: string, records: number, since: string) =>
    `${kind === 'ROLLOVER' ? '학년도 전환' : '대량 변경'}을 적용하고 있습니다 (${n(records, 'ko-KR')}건, ${since}부터). 끝나면 학생 기록이 한꺼번에 바뀌어 있습니다.`,
  rolloverHelp: '앱을 만드는 분: 변경 피드와 웹훅의 school.rollover.started 와 school.rollover.completed 사이의 변경은 한 묶음입니다.',
  current: '진행 중인 장애와 점검',
  noCurrent: '진행 중인 장애나 점검이 없습니다.',
  planned: '예정된 점검',
  noPlanned: '예정된 점검이 없습니다.',
  plannedRollover: '학년도 전환',
  plannedRolloverText: (previewedAt: string, until: string) =>
    `관리자가 ${previewedAt}에 학년도 전환을 미리 보았습니다. ${until}까지 적용할 수 있으며, 적용하면 학생들의 학년·반·번호가 한꺼번에 바뀝니다.`,
  past: '지난 장애와 점검 (90일)',
  noPast: '지난 90일 동안 없었습니다.',
  kinds: { INCIDENT: '장애', MAINTENANCE: '점검' } satisfies Record<IncidentKind, string>,
  incidentStates: {
    INVESTIGATING: '조사 중',
    IDENTIFIED: '원인 확인',
    MONITORING: '지켜보는 중',
    RESOLVED: '해결됨',
    SCHEDULED: '예정',
    IN_PROGRESS: '진행 중',
    COMPLETED: '완료',
  } satisfies Record<IncidentState, string>,
  affects: (parts: string) => `영향: ${parts}`,
  window: (from: string, to: string) => `${from} ~ ${to}`,
  startedAt: (when: string) => `${when} 시작`,
  updates: '소식',
  seeIncident: '관련 소식:',
  forMachines: '같은 내용을 JSON으로: ',
};

export type StatusTexts = typeof statusKo;

export const statusEn: StatusTexts = {
  title: 'Service status',
  lead: (school: string) =>
    `Whether each part of ${school}'s Campus Data Service works now, how well it worked over the last 90 days, and news of incidents and maintenance. The service checks itself every minute and records what it finds.`,
  overall: { UP: 'Every part is working', DEGRADED: 'Some parts are slow or unsteady', DOWN: 'Some parts are not working' },
  states: { UP: 'Working', DEGRADED: 'Degraded', DOWN: 'Down', OFF: 'Off' },
  parts: {
    'data-api': { name: 'Data API', hint: 'the /v1 API for students, clubs, projects, meals, calendar and timetables' },
    'sign-in': { name: 'Sign-in and tokens', hint: '"Log in with the school", authorization codes and tokens' },
    userinfo: { name: 'Userinfo', hint: '/userinfo, where apps read who signed in' },
    database: { name: 'Database', hint: 'where every record is kept' },
    redis: { name: 'Redis', hint: 'rate limits and change notices shared by the processes' },
    neis: { name: 'NEIS sync', hint: 'meals, calendar and timetables fetched from NEIS' },
    webhooks: { name: 'Webhook delivery', hint: "sending change events to apps' servers" },
  },
  partsTitle: 'Each part',
  checkedAt: (when: string) => `checked ${when}`,
  latency: (ms: number) => `answered in ${n(ms, 'en-US')} ms`,
  reasons: {
    TIMEOUT: 'did not answer in time',
    UNREACHABLE: 'unreachable',
    SLOW: 'slow',
  },
  availability90: (share: number) => `${percent(share, 'en-US')} available over the last 90 days`,
  noHistory: 'Nothing recorded yet.',
  historyAsOf: (when: string) => `The database cannot be reached: the history shown was read at ${when}.`,
  barsLabel: 'The last 90 days (oldest on the left)',
  days: (amiss: number, recorded: number) =>
    `${plural('en-US', amiss, { one: '# day', other: '# days' })} with trouble (of ${plural('en-US', recorded, { one: '# day', other: '# days' })} recorded)`,
  dayColumns: ['Date', 'Available', 'Down', 'Degraded'],
  minutes: (count: number) => plural('en-US', count, { one: '# minute', other: '# minutes' }),
  dayTitle: (date: string, availability: string) => `${date}: ${availability}`,
  dayNone: (date: string) => `${date}: nothing recorded`,
  percent: (share: number) => percent(share, 'en-US'),
  neis: {
    datasets: { meals: 'Meals', schedules: 'Calendar', timetables: 'Timetables' },
    synced: (when: string, age: number) => `synced ${when} (data ${spanEn(age)} old)`,
    never: 'never synced yet',
    lastFailed: 'the last attempt failed',
    off: 'The automatic sync is off (NEIS_SYNC_ENABLED, NEIS_API_KEY).',
  },
  webhooks: {
    backlog: (count: number) => plural('en-US', count, { one: '# event to send', other: '# events to send' }),
    oldest: (age: number) => `the oldest has waited ${spanEn(age)}`,
    waitingOnReceivers: (retrying: number, failing: number) =>
      `${plural('en-US', retrying, { one: '# webhook', other: '# webhooks' })} retrying a receiver that does not answer, ${n(failing, 'en-US')} stopped (the apps' side)`,
  },
  rolloverUnderWay: (kind: string, records: number, since: string) =>
    `A ${kind === 'ROLLOVER' ? 'school-year rollover' : 'mass change'} is being applied (${plural('en-US', records, { one: '# record', other: '# records' })}, since ${since}). When it ends, students' records will have changed all at once.`,
  rolloverHelp:
    'App builders: the changes between school.rollover.started and school.rollover.completed in the change feed and webhooks belong together.',
  current: 'Incidents and maintenance now',
  noCurrent: 'No incident or maintenance is under way.',
  planned: 'Planned maintenance',
  noPlanned: 'No maintenance is planned.',
  plannedRollover: 'School-year rollover',
  plannedRolloverText: (previewedAt: string, until: string) =>
    `Staff previewed the school-year rollover at ${previewedAt}. It can be applied until ${until}; when it is, students' grades, classes and numbers change all at once.`,
  past: 'Past incidents and maintenance (90 days)',
  noPast: 'None in the last 90 days.',
  kinds: { INCIDENT: 'Incident', MAINTENANCE: 'Maintenance' },
  incidentStates: {
    INVESTIGATING: 'Investigating',
    IDENTIFIED: 'Identified',
    MONITORING: 'Monitoring',
    RESOLVED: 'Resolved',
    SCHEDULED: 'Scheduled',
    IN_PROGRESS: 'In progress',
    COMPLETED: 'Completed',
  },
  affects: (parts: string) => `Affects: ${parts}`,
  window: (from: string, to: string) => `${from} to ${to}`,
  startedAt: (when: string) => `began ${when}`,
  updates: 'Updates',
  seeIncident: 'See:',
  forMachines: 'The same as JSON: ',
};

export const adminStatusKo = {
  title: '상태 공지',
  intro: '장애와 점검을 알리고 소식을 이어 올립니다. 여기 올린 것은 누구나 보는 상태 페이지(/status)와 /v1/status에 바로 보입니다.',
  viewPage: '상태 페이지 보기',
  list: '공지',
  columns: ['종류', '제목', '상태', '시작', '최근 소식'],
  none: '아직 올린 공지가 없습니다.',
  count: (count: number) => `공지 ${n(count, 'ko-KR')}건`,
  new: '새 공지',
  kind: '종류',
  titleField: '제목',
  titleHint: `무엇이 어떻게 되었는지 짧게 (${n(MAX_INCIDENT_TITLE, 'ko-KR')}자까지). 예: 급식 API가 응답하지 않음`,
  message: '소식',
  messageHint: `지금 알려진 것과 다음 할 일 (${n(MAX_INCIDENT_MESSAGE, 'ko-KR')}자까지).`,
  parts: '영향을 받는 부분 (선택)',
  state: '상태',
  stateDefault: '종류의 첫 상태 (조사 중, 또는 예정)',
  factParts: '영향을 받는 부분',
  factStarts: '시작',
  factEnds: '끝',
  startsAt: '시작 (점검은 예정 시각)',
  startsAtHint: '비워 두면 지금.',
  endsAt: '끝 (점검만, 예정 시각)',
  open: '공지 올리기',
  opened: '공지를 올렸습니다.',
  back: '공지 목록',
  detailTitle: (title: string) => `공지: ${title}`,
  postUpdate: '소식 올리기',
  updated: '소식을 올렸습니다.',
  resolve: (kind: IncidentKind): string => (kind === 'INCIDENT' ? '해결로 닫기' : '완료로 닫기'),
  resolveHint: '닫는 소식과 함께 끝냅니다. 닫은 공지에는 소식을 더 올릴 수 없습니다.',
  resolved: '공지를 닫았습니다.',
  closed: '이 공지는 닫혔습니다.',
  by: (who: string) => `올린 사람: ${who}`,
  badTime: '날짜와 시각을 골라 주세요.',
  problems: {
    TITLE: `제목은 1자에서 ${n(MAX_INCIDENT_TITLE, 'ko-KR')}자까지입니다.`,
    MESSAGE: `소식은 1자에서 ${n(MAX_INCIDENT_MESSAGE, 'ko-KR')}자까지입니다.`,
    PARTS: '목록에 있는 부분만 고를 수 있습니다.',
    STATE: '이 종류에 맞는 상태를 고르세요.',
    TIMES: '끝은 시작보다 뒤여야 합니다.',
    CLOSED: '닫힌 공지에는 소식을 올릴 수 없습니다.',
  } satisfies Record<IncidentProblem, string>,
};

export type AdminStatusTexts = typeof adminStatusKo;

export const adminStatusEn: AdminStatusTexts = {
  title: 'Status notices',
  intro:
    'Tell people about incidents and maintenance, and post updates as they go. What you post here shows at once on the public status page (/status) and in /v1/status.',
  viewPage: 'See the status page',
  list: 'Notices',
  columns: ['Kind', 'Title', 'State', 'Starts', 'Latest update'],
  none: 'Nothing posted yet.',
  count: (count: number) => plural('en-US', count, { one: '# notice', other: '# notices' }),
  new: 'New notice',
  kind: 'Kind',
  titleField: 'Title',
  titleHint: `What is wrong, in a few words (up to ${n(MAX_INCIDENT_TITLE, 'en-US')} characters). E.g. The meals API does not answer`,
  message: 'Update',
  messageHint: `What is known now and what happens next (up to ${n(MAX_INCIDENT_MESSAGE, 'en-US')} characters).`,
  parts: 'Parts affected (optional)',
  state: 'State',
  stateDefault: "The kind's first state (Investigating, or Scheduled)",
  factParts: 'Parts affected',
  factStarts: 'Starts',
  factEnds: 'Ends',
  startsAt: 'Starts (for maintenance, the planned time)',
  startsAtHint: 'Leave empty for now.',
  endsAt: 'Ends (maintenance only, the planned time)',
  open: 'Post the notice',
  opened: 'The notice is posted.',
  back: 'Notices',
  detailTitle: (title: string) => `Notice: ${title}`,
  postUpdate: 'Post the update',
  updated: 'The update is posted.',
  resolve: (kind: IncidentKind) => (kind === 'INCIDENT' ? 'Close as resolved' : 'Close as completed'),
  resolveHint: 'Ends it with a closing update. A closed notice takes no more updates.',
  resolved: 'The notice is closed.',
  closed: 'This notice is closed.',
  by: (who: string) => `Posted by ${who}`,
  badTime: 'Choose a date and a time.',
  problems: {
    TITLE: `The title is 1 to ${n(MAX_INCIDENT_TITLE, 'en-US')} characters.`,
    MESSAGE: `The update is 1 to ${n(MAX_INCIDENT_MESSAGE, 'en-US')} characters.`,
    PARTS: 'Choose parts from the list only.',
    STATE: 'Choose a state of this kind.',
    TIMES: 'The end must come after the start.',
    CLOSED: 'A closed notice takes no more updates.',
  },
};
