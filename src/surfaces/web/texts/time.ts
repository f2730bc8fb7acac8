import { plural } from '../../../plural.js';

/*
 * A rate limit's window in words, for the messages that name a limit (`10 saves every minute`):
 * whole minutes as minutes, anything else in seconds. Used by ./ko.ts, ./en.ts and ./webhooks.ts.
 */

/** `1분`, `5분`, `90초`. */
export function windowKo(seconds: number): string {
  return seconds % 60 === 0 ? plural('ko-KR', seconds / 60, { other: '#분' }) : plural('ko-KR', seconds, { other: '#초' });
}

/** `minute`, `5 minutes`, `90 seconds` (after "every"). */
export function windowEn(seconds: number): string {
  if (seconds === 60) return 'minute';
  return seconds % 60 === 0
    ? plural('en-US', seconds / 60, { other: '# minutes' })
    : plural('en-US', seconds, { one: 'second', other: '# seconds' });
}
