import { expect } from 'chai';
import { RefusalPace } from '../../src/http/refusal-pace.js';

/** How fast one client address is refused (src/http/refusal-pace.ts), on a clock the test moves. */
describe('accounts and sign-in: refusals paced per address (RefusalPace)', () => {
  let now = 0;
  const pace = () => new RefusalPace({ perSecond: 500, pauseMs: 100 }, () => now);
  const delays = (p: RefusalPace, address: string, count: number) => Array.from({ length: count }, () => p.delayFor(address));

  beforeEach(() => {
    now = 1000;
  });

  it('answers a tenth of a second’s worth at once, then holds each refusal past it for the pause', () => {
    const p = pace();
    expect(delays(p, '192.0.2.1', 50)).to.deep.equal(Array(50).fill(0));
    expect(delays(p, '192.0.2.1', 3)).to.deep.equal([100, 100, 100]);
  });

  it('gives back perSecond refusals a second, and never more than the burst after a quiet spell', () => {
    const p = pace();
    delays(p, '192.0.2.2', 60);
    now += 10; // 10 ms: 5 refusals' worth
    expect(delays(p, '192.0.2.2', 6)).to.deep.equal([0, 0, 0, 0, 0, 100]);
    now += 60_000;
    expect(delays(p, '192.0.2.2', 51).filter((delay) => delay === 0)).to.have.length(50);
  });

  it('paces each address by its budget key: another address is answered at once, an IPv6 /64 is one address', () => {
    const p = pace();
    delays(p, '2001:db8:1:2::1', 50);
    expect(p.delayFor('2001:db8:1:2::ffff')).to.equal(100);
    expect(p.delayFor('2001:db8:1:3::1')).to.equal(0);
    expect(p.delayFor('192.0.2.3')).to.equal(0);
  });
});
