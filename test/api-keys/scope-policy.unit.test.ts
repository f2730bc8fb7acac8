import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { splitKeyRequest } from '../../src/auth/policy.js';
import { DEFAULT_SCOPE_POLICY } from '../../src/config/scope-policy.js';

/** KEY_SCOPE_POLICY: the table by role, overridden role by role; every mistake named. */
describe('API keys: the scope policy (KEY_SCOPE_POLICY)', () => {
  const problems = (value: string): string[] => {
    try {
      loadConfig({ KEY_SCOPE_POLICY: value });
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  };

  it('defaults to the documented table; a role given replaces that role only', () => {
    expect(loadConfig({}).policy.scopePolicy).to.deep.equal(DEFAULT_SCOPE_POLICY);
    const policy = loadConfig({ KEY_SCOPE_POLICY: '{"TEACHER":{"granted":["NEIS_READ"],"approval":["STUDENT_READ"]}}' }).policy.scopePolicy;
    expect(policy.TEACHER).to.deep.equal({ granted: ['NEIS_READ'], approval: ['STUDENT_READ'] });
    expect(policy.USER).to.deep.equal(DEFAULT_SCOPE_POLICY.USER);
  });

  it('refuses what is not a policy, naming the problem', () => {
    expect(problems('not json')[0]).to.match(/^KEY_SCOPE_POLICY: must be a JSON object/);
    expect(problems('{"STUDENT":{"granted":[]}}')[0]).to.match(/^KEY_SCOPE_POLICY: .*STUDENT/);
    expect(problems('{"USER":{"granted":["EVERYTHING"]}}')[0]).to.match(/^KEY_SCOPE_POLICY: USER\.granted\.0: /);
    expect(problems('{"USER":{"granted":["NEIS_READ"],"approval":["NEIS_READ"]}}')[0]).to.equal(
      'KEY_SCOPE_POLICY: USER: a scope cannot be both granted and awaiting approval',
    );
  });

  it("splits a request by the owner's standing (src/auth/policy.ts): granted, pending, and not allowed for the role", () => {
    const settings = loadConfig({}).policy;
    const user = { id: 1, role: 'USER', disabled: false, secondFactor: false } as const;
    expect(splitKeyRequest(user, ['STUDENT_READ', 'CLUB_READ', 'CLUB_READ'], settings)).to.deep.equal({
      granted: ['CLUB_READ'],
      pending: ['STUDENT_READ'],
      refused: [],
    });
    const strict = { ...settings, scopePolicy: { ...DEFAULT_SCOPE_POLICY, USER: { granted: ['NEIS_READ'], approval: [] } } } as const;
    expect(splitKeyRequest(user, ['STUDENT_READ', 'NEIS_READ'], strict).refused).to.deep.equal(['STUDENT_READ']);
    // A staff role whose second factor is required and missing is judged by USER's row.
    const production = { ...settings, staffSecondFactor: 'required' } as const;
    const admin = { id: 2, role: 'ADMIN', disabled: false, secondFactor: false } as const;
    expect(splitKeyRequest(admin, ['STUDENT_READ'], production).pending).to.deep.equal(['STUDENT_READ']);
    expect(splitKeyRequest({ ...admin, secondFactor: true }, ['STUDENT_READ'], production).granted).to.deep.equal(['STUDENT_READ']);
  });
});
