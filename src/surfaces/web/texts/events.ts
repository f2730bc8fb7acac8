import { EVENT_TYPE_TABLE, type EventType } from '../../../data/events/types.js';
import type { DeliveryState, WebhookState } from '../../../data/events/webhooks.js';
import { plural } from '../../../plural.js';
import { windowEn, windowKo } from './time.js';
import { n } from './number.js';

/*
 * The developer console's webhook pages (src/surfaces/console/webhooks.ts), Korean and English.
 * Kept apart from ko.ts / en.ts (which include them as `console.webhooks`) so those stay short.
 * Each event type's hint is its row's in src/data/events/types.ts (a row without both fails type-check).
 */

export const webhooksKo = {
  title: '웹훅',
  home: (count: number, max: number) => `웹훅 ${n(count, 'ko-KR')} / ${n(max, 'ko-KR')}개`,
  intro: (max: number) =>
    `학교 데이터가 바뀌면 내 서버로 이벤트를 보냅니다. 내 API 키의 권한으로 변경 피드(GET /v1/changes)에서 볼 수 있는 이벤트만 보내고, 한 계정에 ${n(max, 'ko-KR')}개까지 둘 수 있습니다.`,
  signing:
    '모든 요청은 Standard Webhooks 방식으로 서명됩니다(webhook-id, webhook-timestamp, webhook-signature 헤더). 받는 쪽은 standardwebhooks 라이브러리와 비밀 값으로 확인하세요.',
  create: '새 웹훅 만들기',
  url: '받을 주소 (URL)',
  urlHint: '예: https://app.example.com/webhooks. 운영 환경에서는 https만, 내부망·루프백 주소는 쓸 수 없습니다.',
  events: '받을 이벤트',
  eventHint: (type: EventType): string => EVENT_TYPE_TABLE[type].hint.ko,
  noEvents: '받을 이벤트를 하나 이상 고르세요.',
  badUrl: (detail: string) => `이 주소는 쓸 수 없습니다. ${detail}`,
  tooMany: (max: number) => `웹훅은 ${n(max, 'ko-KR')}개까지입니다. 쓰지 않는 웹훅을 삭제한 뒤 만드세요.`,
  createButton: '만들기',
  created: '웹훅을 만들었습니다. 지금부터 일어나는 변경을 보냅니다.',
  secretLabel: '서명 비밀 값 (whsec_…)',
  none: '아직 웹훅이 없습니다.',
  state: '상태',
  createdAt: '만든 날',
  states: { ACTIVE: '보내는 중', PAUSED: '멈춤', FAILING: '실패' } satisfies Record<WebhookState, string>,
  back: '웹훅 목록',
  id: '웹훅 ID',
  position: '마지막으로 처리한 이벤트',
  failures: (count: number, next: string | null) =>
    count === 0 ? '없음' : `${n(count, 'ko-KR')}번 연속 실패${next ? `, 다음 시도 ${next}` : ''}`,
  failuresLabel: '연속 실패',
  failingHint: '재시도를 모두 실패해 보내기를 멈췄습니다. 받는 쪽을 고친 뒤 다시 시작하면 실패한 이벤트부터 차례로 보냅니다.',
  test: '테스트 이벤트 보내기',
  testHint: 'webhook.test 이벤트를 지금 한 번 보냅니다. 서명과 주소를 확인할 때 쓰세요.',
  sent: '보냈습니다. 받는 쪽이 2xx로 답했습니다.',
  notSent: (response: string) => `받는 쪽이 받지 않았습니다: ${response}`,
  sendsTooOften: (max: number, windowSeconds: number, retryAfterSeconds: number) =>
    `테스트 이벤트와 다시 보내기는 합쳐서 ${windowKo(windowSeconds)}에 ${n(max, 'ko-KR')}번까지입니다. ${n(retryAfterSeconds, 'ko-KR')}초 뒤에 다시 보내세요.`,
  pause: '멈추기',
  resume: '다시 시작',
  pauseHint: '멈춘 동안의 이벤트는 변경 피드에 30일 동안 남고, 다시 시작하면 차례로 보냅니다.',
  paused: '웹훅을 멈췄습니다.',
  resumed: '웹훅을 다시 시작했습니다.',
  rotate: '비밀 값 다시 발급',
  rotateHint: '새 비밀 값을 발급하면 이전 값으로는 더 이상 서명하지 않습니다. 받는 쪽의 값을 함께 바꾸세요.',
  rotated: '새 비밀 값을 발급했습니다.',
  newSecret: '새 서명 비밀 값',
  delete: '웹훅 삭제',
  deleteHint: '웹훅과 전송 기록이 바로 삭제되고, 더 이상 보내지 않습니다.',
  deleteConfirm: '이 웹훅과 전송 기록을 삭제하는 것을 이해했습니다',
  confirmNeeded: '삭제하려면 확인란을 선택하세요.',
  deleted: '웹훅을 삭제했습니다.',
  deliveries: '전송 기록',
  deliveriesHint:
    '최근 50건. 2xx 답이 10초 안에 오면 전달된 것입니다. 실패하면 5초, 5분, 30분, 2시간, 5시간, 10시간, 10시간 뒤에 다시 보냅니다.',
  noDeliveries: '아직 보낸 이벤트가 없습니다.',
  event: '이벤트',
  type: '종류',
  deliveryState: '결과',
  deliveryStates: { PENDING: '재시도 대기', DELIVERED: '전달됨', FAILED: '실패' } satisfies Record<DeliveryState, string>,
  attempts: '시도',
  lastAttempt: '마지막 시도',
  noAnswer: '답 없음',
  byHand: '직접',
  redeliver: '다시 보내기',
  redeliverLabel: (id: string) => `${id} 다시 보내기`,
};

export type WebhookTexts = typeof webhooksKo;

export const webhooksEn: WebhookTexts = {
  title: 'Webhooks',
  home: (count: number, max: number) => `${n(count, 'en-US')} of ${n(max, 'en-US')} webhooks`,
  intro: (max: number) =>
    `When school data changes, events are sent to your server: those your API keys' scopes show in the change feed (GET /v1/changes). An account may have up to ${n(max, 'en-US')}.`,
  signing:
    'Every request is signed the Standard Webhooks way (headers webhook-id, webhook-timestamp, webhook-signature). Verify it with a standardwebhooks library and the secret.',
  create: 'Create a webhook',
  url: 'Address (URL)',
  urlHint: 'For example https://app.example.com/webhooks. In production https only; no internal or loopback addresses.',
  events: 'Events',
  eventHint: (type: EventType) => EVENT_TYPE_TABLE[type].hint.en,
  noEvents: 'Choose at least one kind of event.',
  badUrl: (detail: string) => `This address cannot be used. ${detail}`,
  tooMany: (max: number) => `At most ${n(max, 'en-US')} webhooks. Delete one you no longer use first.`,
  createButton: 'Create',
  created: 'Webhook created. Changes from now on are sent to it.',
  secretLabel: 'Signing secret (whsec_…)',
  none: 'No webhooks yet.',
  state: 'State',
  createdAt: 'Created',
  states: { ACTIVE: 'Sending', PAUSED: 'Paused', FAILING: 'Failing' },
  back: 'Webhooks',
  id: 'Webhook ID',
  position: 'Last event handled',
  failures: (count: number, next: string | null) =>
    count === 0 ? 'none' : `${n(count, 'en-US')} in a row${next ? `, next attempt ${next}` : ''}`,
  failuresLabel: 'Failed attempts',
  failingHint:
    'Every retry failed, so sending stopped. Fix the receiver, then resume: it gets the failed event first, then the rest in order.',
  test: 'Send a test event',
  testHint: 'Sends one webhook.test event now, to check the address and the signature.',
  sent: 'Sent: the receiver answered 2xx.',
  notSent: (response: string) => `The receiver did not accept it: ${response}`,
  sendsTooOften: (max: number, windowSeconds: number, retryAfterSeconds: number) =>
    `At most ${n(max, 'en-US')} test events and deliveries sent again, together, every ${windowEn(windowSeconds)}. Try again in ${plural('en-US', retryAfterSeconds, { one: '# second', other: '# seconds' })}.`,
  pause: 'Pause',
  resume: 'Resume',
  pauseHint: 'Events of the pause stay in the change feed for 30 days and are sent in order when you resume.',
  paused: 'Webhook paused.',
  resumed: 'Webhook resumed.',
  rotate: 'Issue a new secret',
  rotateHint: 'Once a new secret is issued the old one signs nothing more. Change it at the receiver too.',
  rotated: 'New secret issued.',
  newSecret: 'New signing secret',
  delete: 'Delete webhook',
  deleteHint: 'The webhook and its delivery log are deleted at once; nothing more is sent.',
  deleteConfirm: 'I understand this deletes the webhook and its delivery log',
  confirmNeeded: 'Tick the box to delete.',
  deleted: 'Webhook deleted.',
  deliveries: 'Deliveries',
  deliveriesHint:
    'The latest 50. A 2xx answer within 10 s counts as delivered. A failure is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.',
  noDeliveries: 'Nothing sent yet.',
  event: 'Event',
  type: 'Type',
  deliveryState: 'Result',
  deliveryStates: { PENDING: 'Retrying', DELIVERED: 'Delivered', FAILED: 'Failed' },
  attempts: 'Attempts',
  lastAttempt: 'Last attempt',
  noAnswer: 'no answer',
  byHand: 'by hand',
  redeliver: 'Send again',
  // Holds the visible words (WCAG 2.5.3 Label in Name).
  redeliverLabel: (id: string) => `Send again: ${id}`,
};
