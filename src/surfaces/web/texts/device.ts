import type { LogoutCause, LogoutNoticeState } from '../../../data/events/logout-notices.js';
import { n } from './number.js';

/*
 * Device sign-in (/device, RFC 8628: src/surfaces/web/provider-pages.ts) and the developer
 * console's words for an app's back-channel logout (src/surfaces/console/apps.ts),
 * Korean and English. Kept apart from ko.ts / en.ts, which include them as `device` and inside
 * `console.apps`.
 */

export const deviceKo = {
  title: '기기 로그인',
  intro: '기기(교실 화면, 명령줄 도구 등)에 보이는 코드를 입력하세요. 코드는 10분 동안 한 번만 쓸 수 있습니다.',
  code: '기기에 보이는 코드',
  codeHint: '예: BCDF-GHJK. 대소문자와 하이픈은 상관없습니다.',
  submit: '계속',
  missing: '기기에 보이는 코드를 입력하세요.',
  wrong: '코드가 맞지 않습니다. 기기에 보이는 코드를 다시 확인하세요.',
  expired: '코드가 만료되었습니다. 기기에서 로그인을 다시 시작해 새 코드를 받으세요.',
  used: '이미 쓴 코드입니다. 기기에서 로그인을 다시 시작해 새 코드를 받으세요.',
  aborted: '기기 로그인을 취소했습니다. 기기에는 로그인되지 않습니다.',
  failed: '요청을 처리하지 못했습니다. 기기에서 로그인을 다시 시작하세요.',
  tooMany: (minutes: number) => `잘못된 코드를 너무 많이 입력했습니다. ${n(minutes, 'ko-KR')}분 뒤에 다시 해 보세요.`,
  confirmTitle: '이 기기를 로그인할까요?',
  confirmIntro: (app: string) => `${app} 앱이 학교 계정으로 로그인하려고 합니다.`,
  confirmCode: '기기에 이 코드가 보이는지 확인하세요',
  confirmWarning:
    '직접 시작한 로그인이 아니거나 코드가 다르면 취소하세요. 누군가 보내 준 코드를 입력하면 그 사람의 기기가 내 계정으로 로그인됩니다.',
  requestedFrom: (where: string) => `요청한 곳: ${where}`,
  confirm: '계속',
  cancel: '취소',
  successTitle: '기기 로그인 완료',
  success: (app: string) => `${app} 앱에 로그인했습니다. 기기로 돌아가세요. 이 페이지는 닫아도 됩니다.`,
};

export const deviceEn: typeof deviceKo = {
  title: 'Sign in a device',
  intro: 'Type the code your device (a classroom screen, a command-line tool...) shows. A code works once, for 10 minutes.',
  code: 'The code on your device',
  codeHint: 'For example BCDF-GHJK. Case and dashes do not matter.',
  submit: 'Continue',
  missing: 'Type the code your device shows.',
  wrong: 'That code is not right. Check the code your device shows.',
  expired: 'That code has expired. Start the sign-in again on your device to get a new one.',
  used: 'That code has been used. Start the sign-in again on your device to get a new one.',
  aborted: 'Device sign-in cancelled. The device is not signed in.',
  failed: 'The request could not be completed. Start the sign-in again on your device.',
  tooMany: (minutes: number) => `Too many wrong codes. Try again in ${n(minutes, 'en-US')} minute${minutes === 1 ? '' : 's'}.`,
  confirmTitle: 'Sign in this device?',
  confirmIntro: (app: string) => `${app} wants to sign in with your school account.`,
  confirmCode: 'Check that your device shows this code',
  confirmWarning:
    'If you did not start this sign-in, or the code differs, cancel. Typing a code someone sent you signs their device in to your account.',
  requestedFrom: (where: string) => `Requested from: ${where}`,
  confirm: 'Continue',
  cancel: 'Cancel',
  successTitle: 'Device signed in',
  success: (app: string) => `You signed in to ${app}. Go back to your device; you may close this page.`,
};

/** Why a logout token was sent, in words. */
type CauseWords = Record<LogoutCause, string>;

export const appExtrasKo = {
  logoutUri: '백채널 로그아웃 주소 (선택)',
  logoutHint:
    '로그아웃하거나, 로그인을 끝내거나, 계정이 사용 중지되거나, 앱 연결을 끊으면 이 주소로 서명된 로그아웃 토큰(logout_token: sid, sub)을 보냅니다. 운영 환경에서는 https만, 내부망 주소는 쓸 수 없습니다.',
  logouts: '백채널 로그아웃',
  logoutsIntro: (max: number) => `이 앱의 서버로 보낸 로그아웃 토큰입니다 (최근 ${n(max, 'ko-KR')}개). 실패하면 웹훅처럼 다시 보냅니다.`,
  logoutsNone: '아직 보낸 로그아웃 토큰이 없습니다.',
  logoutColumns: ['보낸 때', '이유', '계정 (sub)', '로그인 (sid)', '상태', '마지막 응답'],
  causes: {
    signed_out: '로그아웃',
    session_ended: '로그인 끝내기',
    account_disabled: '계정 사용 중지',
    app_revoked: '앱 연결 끊기',
  } satisfies CauseWords,
  states: { PENDING: '보낼 예정', DELIVERED: '전달됨', FAILED: '실패' } satisfies Record<LogoutNoticeState, string>,
  noAnswer: '응답 없음',
};

export const appExtrasEn: typeof appExtrasKo = {
  logoutUri: 'Back-channel logout address (optional)',
  logoutHint:
    'When a person signs out, ends a sign-in, is disabled or disconnects the app, a signed logout token (logout_token: sid, sub) is sent here. https only in production; no internal addresses.',
  logouts: 'Back-channel logout',
  logoutsIntro: (max: number) =>
    `Logout tokens sent to this app's server (the latest ${n(max, 'en-US')}). Failed ones are retried, as webhooks are.`,
  logoutsNone: 'No logout token sent yet.',
  logoutColumns: ['Sent', 'Why', 'Account (sub)', 'Sign-in (sid)', 'State', 'Last answer'],
  causes: {
    signed_out: 'signed out',
    session_ended: 'sign-in ended',
    account_disabled: 'account disabled',
    app_revoked: 'app disconnected',
  },
  states: { PENDING: 'to be sent', DELIVERED: 'delivered', FAILED: 'failed' },
  noAnswer: 'no answer',
};
