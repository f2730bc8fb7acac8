import { expect } from 'chai';
import {
  hasAcceptedFactor,
  holdsStaffPrivilege,
  keyPolicyRole,
  pageRefusal,
  secondStep,
  type AccountStanding,
  type PolicySettings,
  type SignInProof,
} from '../../src/auth/policy.js';
import { loadConfig } from '../../src/config/index.js';
import { counterWentBack, relyingPartyOf } from '../../src/oauth/passkeys.js';

/**
 * The rules of passkeys in src/auth/policy.ts and src/oauth/passkeys.ts: a passkey is a staff
 * second factor under ADMIN_MFA=required and the only one under ADMIN_MFA=passkey; an enrolled
 * passkey is asked after the password only of a role that needs a factor; the relying party comes
 * from AUTH_URL; a counter that does not move forward is a clone.
 */
describe('accounts and sign-in: the rules of passkeys (ADMIN_MFA, second step, relying party, counter)', () => {
  const settings = (mode: 'required' | 'passkey' | 'optional'): PolicySettings => ({
    ...loadConfig({}).policy,
    staffSecondFactor: mode,
  });
  const admin = (factors: { secondFactor?: boolean; passkey?: boolean }): AccountStanding => ({
    id: 1,
    role: 'ADMIN',
    disabled: false,
    secondFactor: factors.secondFactor ?? false,
    passkey: factors.passkey ?? false,
  });
  const now = Date.now();
  const byTotp: SignInProof = { secondFactor: true, passkey: false, authTime: now };
  const byPasskey: SignInProof = { secondFactor: true, passkey: true, authTime: now };
  const byPassword: SignInProof = { secondFactor: false, authTime: now };

  it('ADMIN_MFA=required: a sign-in with a passkey or with the TOTP app the account still has holds staff privilege', () => {
    const required = settings('required');
    expect(holdsStaffPrivilege(admin({ passkey: true }), byPasskey, required)).to.equal(true);
    expect(holdsStaffPrivilege(admin({ secondFactor: true }), byTotp, required)).to.equal(true);
    expect(holdsStaffPrivilege(admin({ passkey: true }), byPassword, required)).to.equal(false);
    // The passkey the sign-in used was removed since (a TOTP app left does not stand in for it).
    expect(holdsStaffPrivilege(admin({ secondFactor: true }), byPasskey, required)).to.equal(false);
    expect(pageRefusal('staff-fresh', { account: admin({ passkey: true }), proof: byPasskey }, required, now)).to.equal(null);
    expect(pageRefusal('staff', { account: admin({ passkey: true }), proof: byPassword }, required, now)).to.equal('second-factor-again');
    expect(pageRefusal('staff', { account: admin({}), proof: byPassword }, required, now)).to.equal('second-factor-missing');
  });

  it('ADMIN_MFA=passkey: only a passkey; the TOTP app is no longer enough, neither at the pages nor for keys', () => {
    const passkey = settings('passkey');
    expect(holdsStaffPrivilege(admin({ passkey: true }), byPasskey, passkey)).to.equal(true);
    expect(holdsStaffPrivilege(admin({ secondFactor: true, passkey: true }), byTotp, passkey)).to.equal(false);
    expect(holdsStaffPrivilege(admin({ secondFactor: true }), byTotp, passkey)).to.equal(false);
    expect(pageRefusal('staff', { account: admin({ secondFactor: true }), proof: byTotp }, passkey, now)).to.equal('second-factor-missing');
    expect(pageRefusal('staff', { account: admin({ secondFactor: true, passkey: true }), proof: byTotp }, passkey, now)).to.equal(
      'second-factor-again',
    );
    expect(hasAcceptedFactor(admin({ secondFactor: true }), passkey)).to.equal(false);
    expect(keyPolicyRole(admin({ secondFactor: true }), passkey)).to.equal('USER');
    expect(keyPolicyRole(admin({ passkey: true }), passkey)).to.equal('ADMIN');
    // A teacher's keys (TEACHER_KEYS_MFA) take either factor.
    const teacher: AccountStanding = { id: 2, role: 'TEACHER', disabled: false, secondFactor: true };
    expect(keyPolicyRole(teacher, { ...passkey, teacherSecondFactor: true })).to.equal('TEACHER');
  });

  it('ADMIN_MFA=optional: the role alone, as before', () => {
    expect(holdsStaffPrivilege(admin({}), byPassword, settings('optional'))).to.equal(true);
  });

  it('after the password: the TOTP app when enrolled (the passkey beside it), a passkey alone only where the role needs a factor', () => {
    const passkey = settings('passkey');
    expect(secondStep(admin({ secondFactor: true, passkey: true }), passkey)).to.deep.equal({ totp: true, passkey: true });
    expect(secondStep(admin({ passkey: true }), passkey)).to.deep.equal({ totp: false, passkey: true });
    expect(secondStep(admin({ passkey: true }), settings('optional'))).to.equal(null);
    const student: AccountStanding = { id: 3, role: 'USER', disabled: false, secondFactor: false, passkey: true };
    expect(secondStep(student, passkey)).to.equal(null);
    expect(secondStep({ ...student, secondFactor: true }, passkey)).to.deep.equal({ totp: true, passkey: true });
  });

  it('the relying party is AUTH_URL’s host name: https, or http only at localhost; none at an IP address', () => {
    const at = (auth: string) => relyingPartyOf({ urls: { auth, userinfo: auth, base: auth } });
    expect(at('https://auth.gsm.hs.kr')).to.deep.equal({ id: 'auth.gsm.hs.kr', origin: 'https://auth.gsm.hs.kr' });
    expect(at('http://localhost:8080')).to.deep.equal({ id: 'localhost', origin: 'http://localhost:8080' });
    expect(at('http://campus.localhost:8080')).to.deep.equal({ id: 'campus.localhost', origin: 'http://campus.localhost:8080' });
    expect(at('http://127.0.0.1:8080')).to.equal(null);
    expect(at('https://10.0.0.5')).to.equal(null);
    expect(at('http://[::1]:8080')).to.equal(null);
    expect(at('http://campus.school.test')).to.equal(null);
  });

  it('a counter that does not move forward is a clone; authenticators without one (always 0) are not', () => {
    expect(counterWentBack(0, 0)).to.equal(false);
    expect(counterWentBack(0, 1)).to.equal(false);
    expect(counterWentBack(5, 6)).to.equal(false);
    expect(counterWentBack(5, 5)).to.equal(true);
    expect(counterWentBack(5, 4)).to.equal(true);
    expect(counterWentBack(5, 0)).to.equal(true);
  });
});
