import { expect } from 'chai';
import { RequestBudget } from '../../src/data/platform/budget.js';
import { TimeBudgetError } from '../../src/errors/index.js';
import { Deadlines } from '../../src/http/budget.js';

const TIME_MS = 50;
const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A request's budget, and when it was added to `deadlines` and when it was stopped (if it was). */
function underWay(deadlines: Deadlines): { budget: RequestBudget; addedAt: number; stoppedAt?: number; end(): void } {
  const addedAt = performance.now();
  const budget = new RequestBudget({ timeMs: TIME_MS, maxOperations: 10 });
  const request: { budget: RequestBudget; addedAt: number; stoppedAt?: number; end(): void } = {
    budget,
    addedAt,
    end: () => deadlines.settle(entry),
  };
  const entry = deadlines.add(budget);
  budget.onAbandon(() => (request.stoppedAt = performance.now()));
  return request;
}

/** One timer for the deadlines of every data request under way (src/http/budget.ts). */
describe('data API: Deadlines, one timer for every request under way', () => {
  it('stops a request at its deadline, never before, and not one that ended before it', async () => {
    const deadlines = new Deadlines();
    const first = underWay(deadlines);
    const second = underWay(deadlines);
    second.end();
    await wait(TIME_MS * 3);
    expect(first.budget.abandoned).to.be.instanceOf(TimeBudgetError);
    expect((first.stoppedAt ?? 0) - first.addedAt).to.be.at.least(TIME_MS);
    expect(second.budget.abandoned).to.equal(undefined);
  });

  it('stops a request that came later at its own deadline, after the one before it ended', async () => {
    const deadlines = new Deadlines();
    const first = underWay(deadlines);
    await wait(TIME_MS / 2);
    const later = underWay(deadlines);
    first.end();
    await wait(TIME_MS * 3);
    expect(first.budget.abandoned).to.equal(undefined);
    expect(later.budget.abandoned).to.be.instanceOf(TimeBudgetError);
    expect((later.stoppedAt ?? 0) - later.addedAt).to.be.at.least(TIME_MS);
  });

  it('stops every request under way when its deadline passes, whatever ended among them', async () => {
    const deadlines = new Deadlines();
    const requests = Array.from({ length: 3000 }, () => underWay(deadlines));
    // Every other one ends, so ended requests sit between live ones (and the queue is compacted).
    requests.forEach((request, i) => i % 2 === 0 && request.end());
    await wait(TIME_MS * 3);
    const wrong = requests.filter((request, i) => (request.budget.abandoned !== undefined) !== (i % 2 === 1));
    expect(wrong.length, 'requests stopped though they ended, or not stopped though under way').to.equal(0);
  });
});
