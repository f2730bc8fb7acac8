import { expect } from 'chai';
import { sessionTtl } from '../../src/oauth/provider.js';
import { loginDelayMs } from '../../src/oauth/throttle.js';

/** The numbers of the account-wide login delay and the session lifetimes, as pure functions. */
describe('accounts and sign-in: login delay and session lifetime', () => {
  it('the account-wide delay: free attempts, then doubling from the first delay up to the cap', () => {
    const delay = { firstMs: 500, maxMs: 10000 };
    const delays = Array.from({ length: 12 }, (_, earlier) => loginDelayMs(earlier, 5, delay));
    expect(delays).to.deep.equal([0, 0, 0, 0, 0, 500, 1000, 2000, 4000, 8000, 10000, 10000]);
    expect(loginDelayMs(10_000, 5, delay)).to.equal(10000);
    expect(loginDelayMs(99, 5, { firstMs: 0, maxMs: 10000 })).to.equal(0);
  });

  it('a session lasts an hour of inactivity unless remembered; a remembered one ends 14 days after the login', () => {
    const now = 1_800_000_000;
    expect(sessionTtl({}, now)).to.equal(3600);
    expect(sessionTtl({ accountId: '7', transient: true, loginTs: now }, now)).to.equal(3600);
    expect(sessionTtl({ accountId: '7', loginTs: now }, now)).to.equal(14 * 24 * 3600);
    expect(sessionTtl({ accountId: '7', loginTs: now - 10 * 24 * 3600 }, now)).to.equal(4 * 24 * 3600);
    expect(sessionTtl({ accountId: '7', loginTs: now - 15 * 24 * 3600 }, now)).to.equal(1);
  });
});
