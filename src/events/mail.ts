import type { Mail } from '../oauth/mail.js';

const PRODUCT = '캠퍼스 데이터 서비스 (Campus Data Service)';

/** The mail to a webhook's owner once its retries are spent (src/events/delivery.ts); Korean first, English below, as the service's other mails (src/oauth/mail-texts.ts). */
export function failingMail(to: string, webhook: { id: string; url: string; since: Date; lastResponse: string; consoleUrl: string }): Mail {
  const text = `안녕하세요.

웹훅 ${webhook.id} (${webhook.url})이(가) ${webhook.since.toISOString()}부터 이벤트를 받지 못해 '실패' 상태가 되었습니다.
더 이상 보내지 않습니다. 이벤트는 30일 동안 보관되므로, 받는 쪽을 고친 뒤 콘솔에서 다시 시작하면 실패한 이벤트부터 차례로 받습니다.
마지막 응답: ${webhook.lastResponse || '(없음)'}
${webhook.consoleUrl}

---

Hello,

Webhook ${webhook.id} (${webhook.url}) has not accepted events since ${webhook.since.toISOString()} and is now marked failing.
Nothing more is sent. Events are kept for 30 days: fix the receiver, then resume the webhook in the console and it receives
them in order, from the one that failed.
Last answer: ${webhook.lastResponse || '(none)'}
${webhook.consoleUrl}
`;
  return { to, subject: `[${PRODUCT}] 웹훅 전송 실패 / Webhook failing`, text, loggableText: text };
}
