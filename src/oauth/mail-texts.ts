import type { Mail } from './mail.js';

/**
 * The service's mails, Korean first with English below, as plain text (readable everywhere,
 * nothing to render). A code never goes into a subject line: subjects are logged and shown in
 * notifications.
 */

const PRODUCT = '캠퍼스 데이터 서비스 (Campus Data Service)';
const MASK = '········';

/** The mail with the sign-up code. */
export function verificationMail(to: string, code: string, minutes: number): Mail {
  const text = (shown: string) => `안녕하세요.

캠퍼스 데이터 서비스 가입을 위한 이메일 인증 코드입니다.

    ${shown}

이 코드는 ${minutes}분 동안 한 번만 쓸 수 있습니다. 가입을 요청하지 않았다면 이 메일을 무시하세요.
코드를 다른 사람에게 알려 주지 마세요. 학교는 코드를 묻지 않습니다.

---

Hello,

Here is your email verification code for signing up to the Campus Data Service:

    ${shown}

It can be used once, within ${minutes} minutes. If you did not ask to sign up, ignore this mail.
Never share the code: the school will never ask you for it.
`;
  return { to, subject: `[${PRODUCT}] 이메일 인증 코드 / Email verification code`, text: text(code), loggableText: text(MASK) };
}

/** The mail sent instead of a code when the email already has an account (sign-up asks nothing more). */
export function alreadyRegisteredMail(to: string, resetUrl: string): Mail {
  const text = `안녕하세요.

이 이메일 주소로 캠퍼스 데이터 서비스 가입이 요청되었지만, 이미 이 주소의 계정이 있습니다.
비밀번호가 기억나지 않으면 여기에서 재설정하세요: ${resetUrl}
직접 요청하지 않았다면 이 메일을 무시하세요.

---

Hello,

Someone asked to sign up to the Campus Data Service with this address, but it already has an account.
If you forgot the password, reset it here: ${resetUrl}
If you did not ask for this, ignore this mail.
`;
  return { to, subject: `[${PRODUCT}] 이미 가입된 주소입니다 / This address already has an account`, text, loggableText: text };
}

/** The mail with the password-reset code. */
export function resetMail(to: string, code: string, minutes: number): Mail {
  const text = (shown: string) => `안녕하세요.

캠퍼스 데이터 서비스 비밀번호 재설정 코드입니다.

    ${shown}

이 코드는 ${minutes}분 동안 한 번만 쓸 수 있습니다. 비밀번호를 바꾸면 모든 기기에서 로그아웃되고,
앱에 허용한 로그인도 모두 끝납니다. 요청하지 않았다면 이 메일을 무시하세요. 비밀번호는 그대로입니다.

---

Hello,

Here is your code for resetting your Campus Data Service password:

    ${shown}

It can be used once, within ${minutes} minutes. Setting a new password signs you out everywhere and
ends every app's sign-in. If you did not ask for this, ignore this mail: your password stays as it is.
`;
  return { to, subject: `[${PRODUCT}] 비밀번호 재설정 코드 / Password reset code`, text: text(code), loggableText: text(MASK) };
}

/**
 * The mail with a sign-in code, sent when many wrong passwords for the account were typed
 * (src/oauth/throttle.ts: the password alone no longer signs it in for a while), or when the
 * owner asks for a new code on the login page.
 */
export function signInCodeMail(to: string, code: string, minutes: number): Mail {
  const text = (shown: string) => `안녕하세요.

이 계정에 틀린 비밀번호가 많이 입력되어, 한동안 비밀번호만으로는 로그인할 수 없습니다.
본인이라면 로그인 화면에서 아래 코드를 입력하세요.

    ${shown}

이 코드는 ${minutes}분 동안 한 번만 쓸 수 있습니다. 본인이 시도한 것이 아니라면 누군가 비밀번호를 추측하고 있을 수 있으니,
로그인한 뒤 내 계정에서 비밀번호를 바꾸세요. 코드를 다른 사람에게 알려 주지 마세요.

---

Hello,

Many wrong passwords were typed for this account, so for a while the password alone no longer signs it in.
If this is you, type this code on the sign-in page:

    ${shown}

It can be used once, within ${minutes} minutes. If it was not you, someone may be guessing your password:
sign in and change it in My account. Never share the code.
`;
  return { to, subject: `[${PRODUCT}] 로그인 코드 / Sign-in code`, text: text(code), loggableText: text(MASK) };
}

/** The mail telling a teacher what an admin decided on their sign-up. */
export function approvalMail(to: string, approved: boolean, consoleUrl: string): Mail {
  const text = approved
    ? `안녕하세요.

교사 계정 신청이 승인되었습니다. 앱에는 교사 기록이 보이고, 개발자 콘솔에서 만드는 키는 학생 데이터를 바로 받습니다: ${consoleUrl}

---

Hello,

Your teacher account has been approved. Apps see your teacher record, and the keys you make in the developer console get student data at once: ${consoleUrl}
`
    : `안녕하세요.

교사 계정 신청이 승인되지 않았습니다. 계정은 일반 계정으로 남습니다. 궁금한 점은 학교 관리자에게 문의하세요.

---

Hello,

Your teacher account request was not approved. The account stays an ordinary account. Ask the school's administrators if you have questions.
`;
  return {
    to,
    subject: approved
      ? `[${PRODUCT}] 교사 계정 승인 / Teacher account approved`
      : `[${PRODUCT}] 교사 계정 신청 결과 / Teacher account request`,
    text,
    loggableText: text,
  };
}

/** The password-reset code an administrator sent from the admin console (or `campus`). */
export function adminResetMail(to: string, code: string, minutes: number, resetUrl: string): Mail {
  const text = (shown: string) => `안녕하세요.

학교 관리자가 캠퍼스 데이터 서비스 비밀번호 재설정 코드를 보내 드렸습니다.
여기에서 이 이메일 주소와 코드로 새 비밀번호를 정하세요: ${resetUrl}

    ${shown}

이 코드는 ${minutes}분 동안 한 번만 쓸 수 있습니다. 비밀번호를 바꾸면 모든 기기에서 로그아웃됩니다.
지금 비밀번호를 계속 쓰려면 이 메일을 무시하세요.

---

Hello,

An administrator of the school sent you a code for resetting your Campus Data Service password.
Set a new password here with this email address and the code: ${resetUrl}

    ${shown}

It can be used once, within ${minutes} minutes. Setting a new password signs you out everywhere.
To keep your password, ignore this mail.
`;
  return { to, subject: `[${PRODUCT}] 비밀번호 재설정 코드 / Password reset code`, text: text(code), loggableText: text(MASK) };
}

/** The mail every administrator gets when a teacher's sign-up waits for approval. */
export function teacherWaitingMail(to: string, teacher: { email: string; name: string; department: string }, accountsUrl: string): Mail {
  const text = `안녕하세요.

교사 계정 신청이 승인을 기다립니다.

    ${teacher.name} (${teacher.department}) <${teacher.email}>

관리자 콘솔에서 승인하거나 거절하세요: ${accountsUrl}

---

Hello,

A teacher's sign-up waits for approval:

    ${teacher.name} (${teacher.department}) <${teacher.email}>

Approve or refuse it in the admin console: ${accountsUrl}
`;
  return { to, subject: `[${PRODUCT}] 교사 계정 승인 대기 / A teacher sign-up waits`, text, loggableText: text };
}
