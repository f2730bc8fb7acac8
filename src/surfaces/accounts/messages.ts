import type { Lang } from '../../http/web/lang.js';
import { PASSWORD_LENGTH } from '../../oauth/password-policy.js';
import { counted } from '../../plural.js';
import type { SelfServiceError, SelfServiceProblem } from '../../oauth/self-service.js';
import type { FieldError } from '../console/ui.js';

/** The pages' words for each refusal of src/oauth/self-service.ts, Korean and English. */
function message(lang: Lang, problem: SelfServiceProblem, domain: string, retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  const ko: Record<SelfServiceProblem, string> = {
    invalid_request: '필수 항목을 입력하세요.',
    invalid_email: '이메일 주소 형식이 올바르지 않습니다.',
    email_domain_not_allowed: `@${domain} 학교 이메일로만 가입할 수 있습니다.`,
    invalid_teacher: '이름과 학과(부서)를 각각 1~50자로 입력하세요.',
    password_too_short: `비밀번호는 ${PASSWORD_LENGTH.min}자 이상이어야 합니다.`,
    password_too_long: `비밀번호는 ${PASSWORD_LENGTH.max}자 이하여야 합니다.`,
    password_too_common: '너무 흔한 비밀번호입니다 (유출된 비밀번호 목록에 있습니다). 다른 비밀번호를 정하세요.',
    password_contains_email: '비밀번호에 이메일 아이디(@ 앞부분)를 넣을 수 없습니다.',
    invalid_code: '코드가 틀렸거나, 만료되었거나, 이미 사용되었습니다. 새 코드를 요청하세요.',
    account_exists: '이 이메일로 만든 계정이 이미 있습니다. 로그인하거나 비밀번호를 재설정하세요.',
    wrong_password: '현재 비밀번호가 올바르지 않습니다.',
    too_many_requests: `시도가 너무 많습니다. ${minutes}분 후에 다시 시도하세요.`,
  };
  const en: Record<SelfServiceProblem, string> = {
    invalid_request: 'Fill in the required fields.',
    invalid_email: 'This is not an email address.',
    email_domain_not_allowed: `Only @${domain} school addresses can sign up.`,
    invalid_teacher: 'Enter your name and department, 1 to 50 characters each.',
    password_too_short: `The password must have at least ${PASSWORD_LENGTH.min} characters.`,
    password_too_long: `The password must have at most ${PASSWORD_LENGTH.max} characters.`,
    password_too_common: 'This password is too common (it is on a list of breached passwords). Choose another.',
    password_contains_email: 'The password must not contain your email name (the part before @).',
    invalid_code: 'The code is wrong, expired or already used. Ask for a new one.',
    account_exists: 'An account with this email already exists. Sign in or reset the password.',
    wrong_password: 'The current password is not correct.',
    too_many_requests: `Too many attempts. Try again in ${counted(minutes, 'minute')}.`,
  };
  return (lang === 'ko' ? ko : en)[problem];
}

/** A refusal as the error of its form field (the password rules on `password`, and so on). */
export function fieldErrorOf(lang: Lang, err: SelfServiceError, domain: string, fallbackField: string): FieldError {
  return { field: err.field ?? fallbackField, message: message(lang, err.problem, domain, err.retryAfterSeconds ?? 60) };
}

/** The password rules, said before anyone breaks them. */
export function passwordHint(lang: Lang): string {
  return lang === 'ko'
    ? `${PASSWORD_LENGTH.min}~${PASSWORD_LENGTH.max}자. 흔한 비밀번호와 이메일 아이디가 들어간 비밀번호는 쓸 수 없습니다.`
    : `${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters; not a common password, and not containing your email name.`;
}
