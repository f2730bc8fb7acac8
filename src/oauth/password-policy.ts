/**
 * The password rules of self-service accounts (docs/decisions.md, "Accounts and login"): sign-up,
 * password reset and password change all check a new password here, and only here.
 */

/** Characters (Unicode code points) a password must have, and may have. */
export const PASSWORD_LENGTH = { min: 8, max: 100 } as const;

/** A local part this short is not checked (nearly every password would contain one letter). */
const MIN_CHECKED_LOCAL_PART = 3;

/** Why a password is refused: the `error` code of the JSON endpoints and the key of the pages' messages. */
export type PasswordProblem = 'password_too_short' | 'password_too_long' | 'password_too_common' | 'password_contains_email';

/** The message of each problem, in English (the pages have their own Korean and English texts). */
export const PASSWORD_PROBLEM_MESSAGES: Readonly<Record<PasswordProblem, string>> = {
  password_too_short: `the password must have at least ${PASSWORD_LENGTH.min} characters`,
  password_too_long: `the password must have at most ${PASSWORD_LENGTH.max} characters`,
  password_too_common: 'the password is among the most common (breached) passwords; choose another',
  password_contains_email: "the password must not contain the email address's local part (the part before @)",
};

let commonPasswords: Promise<ReadonlySet<string>> | undefined;

/**
 * The common-password list of @zxcvbn-ts/language-common (about 49,000 passwords seen in
 * breaches), lower-cased; only those long enough to pass the length rule are kept. Loaded on
 * first use, so processes that never check a password never load it.
 */
function loadCommonPasswords(): Promise<ReadonlySet<string>> {
  commonPasswords ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) =>
      new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()).filter((p) => [...p].length >= PASSWORD_LENGTH.min)),
  );
  return commonPasswords;
}

/** The first rule `password` breaks for the account `email`, or null when it is acceptable. */
export async function passwordProblem(password: string, email: string): Promise<PasswordProblem | null> {
  const length = [...password].length;
  if (length < PASSWORD_LENGTH.min) return 'password_too_short';
  if (length > PASSWORD_LENGTH.max) return 'password_too_long';
  const lower = password.toLowerCase();
  const localPart = email.trim().toLowerCase().split('@')[0] ?? '';
  if (localPart.length >= MIN_CHECKED_LOCAL_PART && lower.includes(localPart)) return 'password_contains_email';
  if ((await loadCommonPasswords()).has(lower)) return 'password_too_common';
  return null;
}
