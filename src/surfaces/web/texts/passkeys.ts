import { MAX_PASSKEYS_PER_ACCOUNT, type PasskeyProblem } from '../../../oauth/passkeys.js';
import { plural } from '../../../plural.js';
import { n } from './number.js';

/*
 * Passkeys, Korean and English: the login page's "sign in with a passkey" and its second step
 * (src/surfaces/web/login.ts), the section of /console/account (src/surfaces/console/passkeys.ts),
 * the admin console's account page (src/surfaces/admin/accounts.ts) and the words of the pages'
 * passkey script (web/assets/passkeys.js, given as data attributes). Kept apart from ko.ts /
 * en.ts, which include them as `passkeys`.
 */

export const passkeysKo = {
  signIn: '패스키로 로그인',
  signInHint: '휴대폰이나 컴퓨터의 화면 잠금(지문, 얼굴, PIN)으로 비밀번호 없이 로그인합니다.',
  or: '또는',
  // The second step of a password sign-in (an account whose role needs a factor, or with two-step sign-in on).
  stepTitle: '패스키로 확인',
  stepIntro: '로그인을 마치려면 이 계정의 패스키를 사용하세요.',
  stepUse: '패스키 사용하기',
  stepInstead: '인증 앱 대신 패스키로 확인할 수도 있습니다.',
  // The script's words (web/assets/passkeys.js): shown at once, in a live region.
  working: '브라우저의 안내에 따라 패스키를 확인하세요…',
  cancelled: '패스키 사용을 취소했거나 시간이 지났습니다. 다시 시도하세요.',
  unsupported: '이 브라우저에서는 패스키를 쓸 수 없습니다. 최신 Chrome, Safari, Edge, Firefox에서 다시 시도하세요.',
  problems: {
    unavailable: '이 서비스 주소에서는 패스키를 쓸 수 없습니다.',
    expired: '패스키 요청이 만료되었거나 이미 사용되었습니다. 다시 시도하세요.',
    invalid: '패스키를 확인하지 못했습니다. 다시 시도하세요.',
    unknown: '이 패스키는 이 계정이나 이 서비스에 등록되어 있지 않습니다. 비밀번호로 로그인하세요.',
    cloned: '이 패스키는 복제되었을 수 있어 더는 로그인에 쓸 수 없습니다. 비밀번호로 로그인한 뒤 내 계정에서 삭제하고 새로 추가하세요.',
    limit: (max: number) => `패스키는 계정마다 ${n(max, 'ko-KR')}개까지 둘 수 있습니다. 쓰지 않는 패스키를 먼저 삭제하세요.`,
    duplicate: '이 기기(또는 비밀번호 관리자)에는 이미 이 계정의 패스키가 있습니다.',
  } satisfies Record<PasskeyProblem, string | ((max: number) => string)>,
  // /console/account
  section: '패스키',
  intro:
    '패스키는 휴대폰이나 컴퓨터의 화면 잠금(지문, 얼굴, PIN)으로 비밀번호 없이 로그인하게 합니다. 패스키는 이 서비스의 주소에서만 쓰이므로 가짜 로그인 페이지가 가로챌 수 없습니다.',
  unavailableHere:
    '이 서비스의 주소에서는 패스키를 쓸 수 없습니다: 패스키에는 https 도메인 이름이 필요합니다 (개발 중에는 http://localhost). 운영자에게 문의하세요.',
  none: '아직 패스키가 없습니다.',
  columns: ['이름', '추가한 때', '마지막 사용', '상태', '삭제'],
  synced: '기기 간 동기화됨',
  device: '이 기기에만 있음',
  flagged: '사용 중지됨 (복제 의심)',
  remove: '삭제',
  removeLabel: (name: string) => `패스키 삭제: ${name}`,
  removed: (name: string) => `패스키를 삭제했습니다: ${name}`,
  count: (count: number, max: number) => `${n(count, 'ko-KR')}개 / 최대 ${n(max, 'ko-KR')}개`,
  add: '패스키 추가',
  name: '패스키 이름',
  nameHint: '어느 기기의 패스키인지 알아볼 이름 (예: 내 휴대폰). 50자까지.',
  nameMissing: '패스키 이름을 입력하세요.',
  nameTooLong: '패스키 이름은 50자까지입니다.',
  current: '현재 비밀번호',
  currentOrCode: '현재 비밀번호 또는 인증 앱의 6자리 코드',
  currentHint: '패스키를 추가하기 전에 본인인지 한 번 더 확인합니다.',
  currentMissing: '현재 비밀번호를 입력하세요.',
  next: '계속',
  wrongCode: '인증 앱의 코드가 올바르지 않습니다.',
  createTitle: '패스키 만들기',
  createIntro: (name: string) =>
    `“${name}” 패스키를 만듭니다. 아래 버튼을 누르고, 브라우저가 묻는 대로 화면 잠금(지문, 얼굴, PIN)으로 확인하세요. 5분 안에 마치세요.`,
  create: '패스키 만들기',
  backToAccount: '취소하고 내 계정으로',
  added: (name: string) => `패스키를 추가했습니다: ${name}. 다음 로그인부터 “패스키로 로그인”을 쓸 수 있습니다.`,
  // A role whose privilege needs a passkey (ADMIN_MFA=passkey), and the admin console's refusal.
  neededForRole: (role: string) =>
    `${role} 역할은 패스키가 있어야 권한을 씁니다 (인증 앱의 코드로는 부족합니다). 패스키를 추가하기 전까지는 관리자 콘솔이 열리지 않고, API 키의 권한은 일반 사용자처럼 관리자의 승인을 기다립니다.`,
  orPasskey: '인증 앱 대신 패스키를 추가해도 됩니다.',
  setUp: '내 계정에서 패스키 추가하기',
  adminNeededTitle: '패스키가 필요합니다',
  adminNeeded: '관리자 콘솔을 열려면 패스키로 로그인해야 합니다. 내 계정에서 패스키를 추가한 뒤 그 패스키로 다시 로그인하세요.',
  // /admin/accounts/<id>
  adminSection: '패스키',
  adminNone: '패스키가 없습니다.',
  adminRemoveAll: '패스키 모두 삭제',
  adminRemoveAllHint:
    '잃어버리거나 도난당한 기기의 패스키로 로그인하지 못하게 합니다. 계정 주인은 비밀번호로 로그인해 새로 추가할 수 있습니다. 접근 기록에 남습니다.',
  adminRemoved: (email: string, count: number) => `${email}의 패스키 ${n(count, 'ko-KR')}개를 삭제했습니다.`,
  adminNothingRemoved: '삭제할 패스키가 없습니다.',
};

export const passkeysEn: typeof passkeysKo = {
  signIn: 'Sign in with a passkey',
  signInHint: "Sign in without a password, with your phone's or computer's screen lock (fingerprint, face, PIN).",
  or: 'or',
  stepTitle: 'Confirm with a passkey',
  stepIntro: "To finish signing in, use this account's passkey.",
  stepUse: 'Use a passkey',
  stepInstead: 'You can also confirm with a passkey instead of the app.',
  working: "Follow your browser's prompt to use your passkey…",
  cancelled: 'The passkey was cancelled or took too long. Try again.',
  unsupported: 'This browser cannot use passkeys. Try again in a recent Chrome, Safari, Edge or Firefox.',
  problems: {
    unavailable: "Passkeys cannot be used at this service's address.",
    expired: 'The passkey request expired or was used already. Try again.',
    invalid: 'The passkey could not be verified. Try again.',
    unknown: 'This passkey is not registered for this account or this service. Sign in with your password.',
    cloned:
      'This passkey may have been copied and no longer signs in. Sign in with your password, then remove it in My account and add a new one.',
    limit: (max: number) => `An account holds at most ${n(max, 'en-US')} passkeys. Remove one you no longer use first.`,
    duplicate: 'This device (or password manager) already holds a passkey of this account.',
  },
  section: 'Passkeys',
  intro:
    "A passkey signs you in without a password, with your phone's or computer's screen lock (fingerprint, face, PIN). It works only at this service's address, so a fake login page cannot capture it.",
  unavailableHere:
    "Passkeys cannot be used at this service's address: they need an https domain name (http://localhost while developing). Ask the operators.",
  none: 'No passkeys yet.',
  columns: ['Name', 'Added', 'Last used', 'State', 'Remove'],
  synced: 'Synced between devices',
  device: 'On this device only',
  flagged: 'Stopped (may be copied)',
  remove: 'Remove',
  removeLabel: (name: string) => `Remove passkey: ${name}`,
  removed: (name: string) => `Passkey removed: ${name}`,
  count: (count: number, max: number) =>
    `${plural('en-US', count, { one: '# passkey', other: '# passkeys' })} of at most ${n(max, 'en-US')}`,
  add: 'Add a passkey',
  name: 'Passkey name',
  nameHint: "A name to tell which device's passkey it is (e.g. My phone). Up to 50 characters.",
  nameMissing: 'Enter a name for the passkey.',
  nameTooLong: 'The passkey name is up to 50 characters.',
  current: 'Current password',
  currentOrCode: 'Current password, or the 6-digit code of your authenticator app',
  currentHint: 'Before a passkey is added, we check once more that it is you.',
  currentMissing: 'Enter your current password.',
  next: 'Continue',
  wrongCode: 'The code of the authenticator app is not right.',
  createTitle: 'Create the passkey',
  createIntro: (name: string) =>
    `This creates the passkey “${name}”. Press the button below and confirm with your screen lock (fingerprint, face, PIN) as the browser asks. Finish within 5 minutes.`,
  create: 'Create the passkey',
  backToAccount: 'Cancel and go back to My account',
  added: (name: string) => `Passkey added: ${name}. From your next sign-in, “Sign in with a passkey” works.`,
  neededForRole: (role: string) =>
    `The ${role} role uses its privileges only with a passkey (an authenticator app's code is not enough). Until you add one, the admin console does not open and your API keys' scopes wait for an administrator's approval, as a regular user's do.`,
  orPasskey: 'You can add a passkey instead of the authenticator app.',
  setUp: 'Add a passkey in My account',
  adminNeededTitle: 'A passkey is required',
  adminNeeded: 'The admin console needs a sign-in with a passkey. Add one in My account, then sign in again with it.',
  adminSection: 'Passkeys',
  adminNone: 'No passkeys.',
  adminRemoveAll: 'Remove all passkeys',
  adminRemoveAllHint:
    "Stops the passkeys of a lost or stolen device from signing in. The account's owner can sign in with the password and add new ones. Recorded in the access log.",
  adminRemoved: (email: string, count: number) =>
    `Removed ${plural('en-US', count, { one: '# passkey', other: '# passkeys' })} of ${email}.`,
  adminNothingRemoved: 'There were no passkeys to remove.',
};

/** A refusal of a passkey ceremony in the page's words. */
export function passkeyProblem(texts: typeof passkeysKo, problem: PasskeyProblem): string {
  const text = texts.problems[problem];
  return typeof text === 'function' ? text(MAX_PASSKEYS_PER_ACCOUNT) : text;
}
