import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import { LeaseLostError, NeisStore, type Lease } from '../../src/data/neis/store.js';
import { createTestDatabase } from '../helpers/database.js';

const SCHOOL = 'F10/7380292';
const T0 = new Date('2026-03-16T03:00:00Z');

function meal(date: string, type: 'BREAKFAST' | 'LUNCH' | 'DINNER', menu: string) {
  const code = { BREAKFAST: 1, LUNCH: 2, DINNER: 3 }[type];
  return {
    mealId: `7380292_${date.replaceAll('-', '')}_${code}`,
    schoolCode: '7380292',
    schoolName: '광주소프트웨어마이스터고등학교',
    officeCode: 'F10',
    officeName: '광주광역시교육청',
    mealDate: date,
    mealType: type,
    mealTypeRank: code,
    mealMenu: [menu],
    mealAllergyInfo: null,
    mealCalories: null,
    originInfo: null,
    nutritionInfo: null,
    mealServeCount: null,
  };
}

/** The store's guarantees against the real database: atomic switch, lease terms, clean-up. */
describe('NEIS: the store, generations, segments and the lease', () => {
  let db: Database & { drop(): Promise<void> };
  let store: NeisStore;

  beforeEach(async () => {
    db = await createTestDatabase('neis-store');
    store = new NeisStore(db);
  });
  afterEach(() => db.drop());

  async function take(owner: string, now = T0, ttlMs = 60_000): Promise<Lease> {
    const result = await store.acquireLease(owner, ttlMs, now);
    if (!result.acquired) throw new Error(`lease held by ${result.owner ?? '?'}`);
    return result.lease;
  }

  async function publish(lease: Lease, generation: string, from: string, to: string, rows: ReturnType<typeof meal>[]) {
    await store.writeGeneration('meals', lease, generation, rows);
    await store.activate('meals', lease, { from, to, generation }, SCHOOL, T0);
  }

  it('shows new rows only at the switch: before it all old rows, after it all new ones', async () => {
    const lease = await take('a');
    await publish(lease, 'g1', '2026-03-16', '2026-03-17', [meal('2026-03-16', 'LUNCH', '돈까스'), meal('2026-03-17', 'LUNCH', '비빔밥')]);
    const menus = async () => (await store.meals('2026-03-16', '2026-03-17')).map((m) => m.mealMenu[0]);
    expect(await menus()).to.deep.equal(['돈까스', '비빔밥']);

    await store.writeGeneration('meals', lease, 'g2', [meal('2026-03-16', 'DINNER', '카레'), meal('2026-03-16', 'BREAKFAST', '죽')]);
    // Written but not switched: readers still get exactly the old rows.
    expect(await menus()).to.deep.equal(['돈까스', '비빔밥']);
    await store.activate('meals', lease, { from: '2026-03-16', to: '2026-03-17', generation: 'g2' }, SCHOOL, T0);
    // Switched: exactly the new rows, in meal-type order; the 17th is now empty (NEIS had nothing).
    expect(await menus()).to.deep.equal(['죽', '카레']);
    expect(await store.meals('2026-03-17', '2026-03-17')).to.deep.equal([]);
  });

  it('replaces only the synced range, keeping the rest of an older window', async () => {
    const lease = await take('a');
    await publish(lease, 'year', '2026-03-01', '2026-03-31', [
      meal('2026-03-02', 'LUNCH', 'A'),
      meal('2026-03-16', 'LUNCH', 'B'),
      meal('2026-03-30', 'LUNCH', 'C'),
    ]);
    await publish(lease, 'week', '2026-03-16', '2026-03-20', [meal('2026-03-16', 'LUNCH', 'B2')]);
    expect((await store.meals('2026-03-01', '2026-03-31')).map((m) => m.mealMenu[0])).to.deep.equal(['A', 'B2', 'C']);
    expect((await store.state())?.segments.meals.map((s) => `${s.from}..${s.to}:${s.generation}`)).to.deep.equal([
      '2026-03-01..2026-03-15:year',
      '2026-03-16..2026-03-20:week',
      '2026-03-21..2026-03-31:year',
    ]);
  });

  it('deletes replaced rows after the grace period, and rows of a sync that died half-way', async () => {
    const lease = await take('a');
    await publish(lease, 'g1', '2026-03-16', '2026-03-16', [meal('2026-03-16', 'LUNCH', 'old')]);
    await publish(lease, 'g2', '2026-03-16', '2026-03-16', [meal('2026-03-16', 'LUNCH', 'new')]);
    await store.writeGeneration('meals', lease, 'dead', [meal('2026-03-16', 'LUNCH', 'never shown')]);
    expect(await db.models.meals.countDocuments({})).to.equal(3);
    // Within the grace period only the orphan goes; the replaced row stays for readers in flight.
    expect(await store.collectGarbage(lease, new Date(T0.getTime() + 1000), 60_000)).to.equal(1);
    expect(await store.collectGarbage(lease, new Date(T0.getTime() + 61_000), 60_000)).to.equal(1);
    expect((await db.models.meals.find({}).lean()).map((m) => m.generation)).to.deep.equal(['g2']);
    expect(await store.collectGarbage(lease, new Date(T0.getTime() + 62_000), 60_000)).to.equal(0);
  });

  it('lets exactly one of many racing instances take the lease', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.acquireLease(`o${i}`, 60_000, T0)));
    expect(results.filter((r) => r.acquired)).to.have.length(1);
    const refused = results.find((r) => !r.acquired);
    expect(refused && !refused.acquired && refused.expiresAt.toISOString()).to.equal('2026-03-16T03:01:00.000Z');
  });

  it('hands an expired lease to the next instance; the old holder can no longer switch data', async () => {
    const first = await take('a', T0, 1000);
    expect((await store.acquireLease('b', 60_000, new Date(T0.getTime() + 500))).acquired).to.equal(false);
    const second = await take('b', new Date(T0.getTime() + 2000));
    expect(second.term).to.equal(first.term + 1);
    await store.writeGeneration('meals', second, 'b1', [meal('2026-03-16', 'LUNCH', 'b')]);
    let lost: unknown;
    await store.activate('meals', first, { from: '2026-03-16', to: '2026-03-16', generation: 'b1' }, SCHOOL, T0).catch((err: unknown) => {
      lost = err;
    });
    expect(lost).to.be.instanceOf(LeaseLostError);
    let renewLost: unknown;
    await store.renewLease(first, 60_000, T0).catch((err: unknown) => {
      renewLost = err;
    });
    expect(renewLost).to.be.instanceOf(LeaseLostError);
    // Released, the lease is free at once.
    await store.releaseLease(second);
    expect((await store.acquireLease('c', 60_000, new Date(T0.getTime() + 3000))).acquired).to.equal(true);
  });

  it("drops another school's data when the configured school changes", async () => {
    const lease = await take('a');
    await publish(lease, 'old-school', '2026-03-01', '2026-03-31', [meal('2026-03-02', 'LUNCH', 'other school')]);
    await store.writeGeneration('meals', lease, 'new-school', [meal('2026-03-16', 'LUNCH', 'ours')]);
    await store.activate('meals', lease, { from: '2026-03-16', to: '2026-03-16', generation: 'new-school' }, 'B10/7010000', T0);
    expect((await store.meals('2026-03-01', '2026-03-31')).map((m) => m.mealMenu[0])).to.deep.equal(['ours']);
    expect((await store.state())?.school).to.equal('B10/7010000');
  });

  it('bumps the data version at every switch, so cached answers are dropped', async () => {
    const before = (await db.versions.current()).data;
    const lease = await take('a');
    await publish(lease, 'g1', '2026-03-16', '2026-03-16', [meal('2026-03-16', 'LUNCH', 'x')]);
    expect((await db.versions.current()).data).not.to.equal(before);
  });
});
