import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestDatabase } from '../helpers/database.js';
import { openDatabase, type Database } from '../../src/data/database.js';
import { joinVersionBus, type VersionBus } from '../../src/data/platform/version-bus.js';
import { createLogger } from '../../src/logger.js';
import { CODE_LIMITS, CodeBudgetSpent, EmailCodes, WRONG_CHECKS_PER_CODE } from '../../src/oauth/email-codes.js';

/**
 * A refusal of the self-service costs no database operation (docs/limits-and-security.md,
 * Self-service): a spent budget, a check of an email that has no code and a wrong code against a
 * live one are answered from memory. Two database handles stand for two processes, joined through
 * the real Redis (src/data/platform/version-bus.ts) as in test/operations/targeted-invalidation.integration.test.ts:
 * a code written by one is never refused by the other for having remembered its absence.
 * The serving process's operations are counted twice: through the data layer's telemetry (every
 * model operation) and as every command its driver sends, less the version clock's read of its
 * stamp, which is made at most once a second whatever the traffic (src/data/platform/versions.ts).
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const KEYS = ['k'.repeat(32)];

describe('accounts and sign-in: refused code checks read and write nothing; a code written elsewhere is found at once', function () {
  this.timeout(60000);
  let serving: Database & { uri: string; drop(): Promise<void> };
  let issuing: Database;
  const redis: Redis[] = [];
  const buses: VersionBus[] = [];
  let operations: string[] = [];
  let commands: string[] = [];
  /** The checks of the serving process; the codes of the issuing one (the same keys: each can check the other's). */
  let codes: EmailCodes;
  let elsewhere: EmailCodes;
  let serial = 0;
  const newEmail = () => `refused${(serial += 1)}@gsm.hs.kr`;

  before(async () => {
    serving = await createTestDatabase('code_refusals', { monitorCommands: true });
    issuing = await openDatabase(serving.uri);
    for (const db of [serving, issuing]) {
      const client = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      await new Promise<void>((done) => client.once('ready', () => done()));
      redis.push(client);
      buses.push(await joinVersionBus(db.versions, client, serving.name, createLogger('silent')));
    }
    serving.telemetry.onOperation((sample) => operations.push(`${sample.operation} ${sample.collection}`));
    serving.client.on('commandStarted', (event) => {
      const target: unknown = event.command[event.commandName];
      const collection = typeof target === 'string' ? target : '-';
      // The clock's stamp: one `find` of `meta` a second at most (src/data/platform/versions.ts, DataVersions.current).
      if (event.commandName === 'find' && collection === 'meta') return;
      commands.push(`${event.commandName} ${collection}`);
    });
    codes = new EmailCodes(serving, KEYS, () => new Date());
    elsewhere = new EmailCodes(issuing, KEYS, () => new Date());
  });
  after(async () => {
    for (const bus of buses) await bus.close();
    for (const client of redis) client.disconnect();
    await issuing.close();
    await serving.drop();
  });

  /** What `work` cost the serving process: its model operations and its driver's commands. */
  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; operations: string[]; commands: string[] }> {
    operations = [];
    commands = [];
    const result = await work();
    return { result, operations, commands };
  }

  /** Runs a change through the issuing process and waits until the serving one heard of it. */
  async function heard(change: () => Promise<unknown>): Promise<void> {
    const before = serving.versions.changesOf('codes');
    await change();
    const started = Date.now();
    while (serving.versions.changesOf('codes') === before) {
      if (Date.now() - started > 500) throw new Error('the serving process did not hear of the code change within 500 ms');
      await new Promise((done) => setImmediate(done));
    }
  }

  const check = (email: string, code: string, address: string) => codes.check('reset', email, code, address);
  const nothing = { operations: [], commands: [] };

  it('a check for an email that has no code reads nothing, from the first one (all codes are read once a process)', async () => {
    // The first check of the process reads every stored code once.
    expect((await counted(() => check(newEmail(), '12345678', '198.51.100.1'))).operations).to.deep.equal(['find email_codes']);
    for (let i = 0; i < 20; i++) {
      const { result, ...cost } = await counted(() => check(newEmail(), '12345678', '198.51.100.1'));
      expect(result).to.equal(null);
      expect(cost).to.deep.equal(nothing);
    }
  });

  it('wrong codes against a live code read and write nothing; the one that kills it deletes it once', async () => {
    const email = newEmail();
    let issued = { code: '' };
    await heard(async () => (issued = await elsewhere.issue('reset', email, '198.51.100.2')));
    const wrong = issued.code === '00000000' ? '11111111' : '00000000';
    // The first check after the change reads the one slot it named.
    expect(await counted(() => check(email, wrong, '198.51.100.2'))).to.deep.equal({
      result: null,
      operations: ['findOne email_codes'],
      commands: ['find email_codes'],
    });
    for (let i = 2; i < WRONG_CHECKS_PER_CODE; i++) {
      expect(await counted(() => check(email, wrong, '198.51.100.2')), `wrong check ${i}`).to.deep.equal({ result: null, ...nothing });
    }
    const kill = await counted(() => check(email, wrong, '198.51.100.2'));
    expect(kill.operations).to.deep.equal(['deleteOne email_codes']);
    // Dead: the right code is refused, and then without a read.
    expect((await check(email, issued.code, '198.51.100.2')) ?? null).to.equal(null);
    expect(await counted(() => check(email, issued.code, '198.51.100.2'))).to.deep.equal({ result: null, ...nothing });
  });

  it('a spent budget refuses without a database operation: checks per email and address, the address at the door, requests', async () => {
    const email = newEmail();
    for (let i = 0; i < CODE_LIMITS.checks.points; i++) await check(email, '12345678', '198.51.100.3');
    const pair = await counted(() => check(email, '12345678', '198.51.100.3').catch((err: unknown) => err));
    expect(pair.result).to.be.instanceOf(CodeBudgetSpent).and.include({ budget: 'checks' });
    expect({ operations: pair.operations, commands: pair.commands }).to.deep.equal(nothing);

    for (let i = 0; i < CODE_LIMITS.addressChecks.points; i++) await check(newEmail(), '12345678', '198.51.100.4').catch(() => null);
    const door = await counted(() => codes.addressRefusal('checks', '198.51.100.4'));
    expect(door.result).to.be.within(1, CODE_LIMITS.addressChecks.durationSeconds);
    expect({ operations: door.operations, commands: door.commands }).to.deep.equal(nothing);
    const past = await counted(() => check(newEmail(), '12345678', '198.51.100.4').catch((err: unknown) => err));
    expect(past.result).to.be.instanceOf(CodeBudgetSpent).and.include({ budget: 'address' });
    expect({ operations: past.operations, commands: past.commands }).to.deep.equal(nothing);
    expect(await codes.addressRefusal('checks', '198.51.100.5')).to.equal(undefined);

    // Code requests: the budgets are spent before the code is stored.
    const asked = newEmail();
    for (let i = 0; i < CODE_LIMITS.requests.points; i++) await codes.issue('reset', asked, '198.51.100.5');
    const request = await counted(() => codes.issue('reset', asked, '198.51.100.5').catch((err: unknown) => err));
    expect(request.result).to.be.instanceOf(CodeBudgetSpent).and.include({ budget: 'requests' });
    expect({ operations: request.operations, commands: request.commands }).to.deep.equal(nothing);
  });

  it('with Redis, an address found spent at the door is refused from memory until its window ends: no round trip', async () => {
    const client = redis[0];
    if (!client) throw new Error('no Redis client');
    const shared = new EmailCodes(serving, KEYS, () => new Date(), client);
    // Redis keeps budgets between runs: an address of this run's own.
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    const address = `${prefix}::1`;
    for (let i = 0; i < CODE_LIMITS.addressChecks.points; i++) await shared.check('reset', newEmail(), '12345678', address);
    const watcher = client.duplicate();
    const monitor = await watcher.monitor();
    const touched: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.includes(prefix) || arg === 'refusals-marker')) touched.push(String(args[0]).toLowerCase());
    });
    /** The commands that named this address since the last call (the marker orders them). */
    const sinceLast = async () => {
      await client.echo('refusals-marker');
      while (!touched.includes('echo')) await new Promise((done) => setTimeout(done, 5));
      return touched.splice(0).filter((command) => command !== 'echo');
    };
    try {
      expect(await shared.addressRefusal('checks', address)).to.be.within(1, CODE_LIMITS.addressChecks.durationSeconds);
      expect(await sinceLast()).to.not.deep.equal([]);
      for (let i = 0; i < 10; i++) expect(await shared.addressRefusal('checks', address)).to.be.within(1, 600);
      expect(await sinceLast()).to.deep.equal([]);
    } finally {
      watcher.disconnect();
    }
  });

  it('a code issued, replaced, used or deleted in another process is seen at once where its absence was remembered', async () => {
    const email = newEmail();
    const address = '198.51.100.6';
    expect(await check(email, '12345678', address)).to.equal(null);
    expect(await counted(() => check(email, '12345678', address))).to.deep.equal({ result: null, ...nothing });

    let first = { code: '' };
    await heard(async () => (first = await elsewhere.issue('reset', email, '203.0.113.60')));
    const found = await check(email, first.code, address);
    expect(found).to.have.property('codeHash').that.is.a('string');

    let second = { code: '' };
    await heard(async () => (second = await elsewhere.issue('reset', email, '203.0.113.60')));
    if (second.code !== first.code) expect(await check(email, first.code, address)).to.equal(null);
    const handle = await check(email, second.code, address);
    expect(handle).to.have.property('codeHash');

    // Used up in the other process: refused here, and the refusal is then remembered.
    await heard(async () => expect(await elsewhere.consume('reset', email, handle ?? { codeHash: '' })).to.equal(true));
    expect(await check(email, second.code, address)).to.equal(null);
    expect(await counted(() => check(email, second.code, address))).to.deep.equal({ result: null, ...nothing });

    let third = { code: '' };
    await heard(async () => (third = await elsewhere.issue('reset', email, '203.0.113.61')));
    await heard(() => elsewhere.deleteFor(email));
    expect(await check(email, third.code, address)).to.equal(null);
  });

  it('a code written by a process without Redis is found within the clock’s second (every code is read again, once)', async () => {
    const email = newEmail();
    const address = '198.51.100.7';
    expect(await check(email, '12345678', address)).to.equal(null);
    // A third process without Redis: its write reaches the others only through the stored version.
    const silent = await openDatabase(serving.uri);
    try {
      const { code } = await new EmailCodes(silent, KEYS, () => new Date()).issue('reset', email, '203.0.113.70');
      await new Promise((done) => setTimeout(done, 1100));
      // The moved version makes every code be read again, once.
      const { result, operations: reads } = await counted(() => check(email, code, address));
      expect(result).to.have.property('codeHash');
      expect(reads).to.deep.equal(['find email_codes']);
    } finally {
      await silent.close();
    }
  });
});
