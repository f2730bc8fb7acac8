import { expect } from 'chai';
import { PASSWORD_LENGTH, passwordProblem } from '../../src/oauth/password-policy.js';

/** The password rules of sign-up, reset and change (src/oauth/password-policy.ts), one source for all three. */
describe('accounts and sign-in: password rules', () => {
  const email = 'minjun@gsm.hs.kr';

  it(`length: ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters, counted as characters (Korean included)`, async () => {
    expect(await passwordProblem('a7$kQ2z', email)).to.equal('password_too_short');
    expect(await passwordProblem('a7$kQ2zx', email)).to.equal(null);
    expect(await passwordProblem('가나다라마바사', email)).to.equal('password_too_short');
    expect(await passwordProblem('가나다라마바사아', email)).to.equal(null);
    expect(await passwordProblem('z'.repeat(100), email)).to.equal(null);
    expect(await passwordProblem('z'.repeat(101), email)).to.equal('password_too_long');
  });

  it('common breached passwords are refused, whatever their case', async () => {
    for (const common of ['password', 'PASSWORD1', 'qwerty123', 'iloveyou', '12345678', 'Sunshine1'])
      expect(await passwordProblem(common, email), common).to.equal('password_too_common');
    expect(await passwordProblem('ramen at midnight', email)).to.equal(null);
  });

  it("a password containing the email's local part is refused (case-insensitive); a local part under 3 characters is not checked", async () => {
    expect(await passwordProblem('hello-MinJun-2026', email)).to.equal('password_contains_email');
    expect(await passwordProblem('minjun!!', email)).to.equal('password_contains_email');
    expect(await passwordProblem('min-jun-garden', email)).to.equal(null);
    expect(await passwordProblem('gallery of jo', 'jo@gsm.hs.kr')).to.equal(null);
  });
});
