import { TEST_POLICY } from '../helpers/factories.js';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { AccountStore } from '../../src/data/accounts/store.js';
import { ApiKeyService } from '../../src/data/keys/store.js';
import { findStanding } from '../../src/data/accounts/standing.js';
import type { Database } from '../../src/data/database.js';
import { undoBatch } from '../../src/data/school/audit.js';
import { applyImport } from '../../src/data/school/import.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { MAX_WEBHOOKS_PER_ACCOUNT, WebhookStore, WEBHOOK_SECRET_PURPOSE, type WebhookActor } from '../../src/data/events/webhooks.js';
import { redeliver, sendTestEvent, WebhookDelivery } from '../../src/events/delivery.js';
import { sendMessage } from '../../src/events/send.js';
import { checkTargetUrl, UnsafeTargetError, type TargetPolicy } from '../../src/events/targets.js';
import { ConflictError } from '../../src/errors/index.js';
import { createLogger } from '../../src/logger.js';
import { AccountService } from '../../src/oauth/accounts.js';
import { Outbox, type Mail } from '../../src/oauth/mail.js';
import { CookieSealer } from '../../src/surfaces/web/seal.js';
import { createTestDatabase } from '../helpers/database.js';
import { eventually, TestReceiver } from '../helpers/receiver.js';

/**
 * Webhook delivery (src/events/delivery.ts) with the real worker, real receivers on
 * local ports and the real feed: signatures verify with the `standardwebhooks` package; failures
 * are retried on the (test-short) schedule in order, each attempt logged; a receiver that was
 * down catches up; retries spent mark the webhook failing and mail its owner; scopes filter; unsafe
 * targets are refused.
 */

const DEV: TargetPolicy = { production: false, allowPrivate: true };
const PRODUCTION: TargetPolicy = { production: true, allowPrivate: false };
const OPERATOR: WebhookActor = 'OPERATOR';

describe('events and webhooks: signed, ordered, retried delivery of the change feed', function () {
  this.timeout(120000);
  let db: Database & { drop(): Promise<void> };
  let store: WebhookStore;
  let delivery: WebhookDelivery;
  let outbox: Outbox;
  const receivers: TestReceiver[] = [];

  /** Starts the worker with this retry schedule (ms). */
  function startWorker(retryScheduleMs: number[]): void {
    outbox = new Outbox();
    delivery = new WebhookDelivery({
      db,
      store,
      policy: DEV,
      retryScheduleMs,
      logger: createLogger('silent'),
      sendMail: async (mail: Mail) => outbox.add({ at: new Date(), to: mail.to, subject: mail.subject, text: mail.text }),
      consoleUrl: 'http://127.0.0.1/console/webhooks',
    });
    delivery.start();
  }

  async function receiver(statuses: number[] = []): Promise<TestReceiver> {
    const r = await new TestReceiver(statuses).open();
    receivers.push(r);
    return r;
  }

  const writer = () => new SchoolWriter(db, CLI_ACTOR);
  /**
   * The delivery log once `count` deliveries are recorded as delivered. The worker records an
   * attempt after the receiver has answered, so a test that waited on the receiver's side waits
   * for the log too (newest attempt first, as deliveriesOf sorts it).
   */
  const deliveredLog = (webhookId: string, count: number) =>
    eventually(
      async () => {
        const log = await store.deliveriesOf(webhookId, OPERATOR);
        return log.length === count && log.every((d) => d.state === 'DELIVERED') && log;
      },
      10000,
      `${count} deliveries recorded as delivered`,
    );

  beforeEach(async () => {
    db = await createTestDatabase('webhooks');
    await seedDemoSchool(db);
    store = new WebhookStore(db, new CookieSealer(['a test cookie key that is long enough to use'], WEBHOOK_SECRET_PURPOSE), TEST_POLICY);
  });
  afterEach(async () => {
    await delivery?.stop();
    for (const r of receivers.splice(0)) await r.close();
    await db.drop();
  });

  it('delivers each event once, in commit order, signed so the standardwebhooks package verifies it', async () => {
    const r = await receiver();
    const { secret, webhook } = await store.create({ ownerAccountId: null, url: r.url, eventTypes: ['student.*'] });
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    startWorker([100]);
    await writer().updateStudent(1, { name: '첫째변경' });
    await writer().updateStudent(2, { name: '둘째변경' });
    await eventually(() => r.received.length === 2, 15000, 'two deliveries');
    const verifier = new Webhook(secret);
    const bodies = r.received.map(
      (got) =>
        verifier.verify(got.body, got.headers as Record<string, string>) as { id: string; type: string; data: { after: { name: string } } },
    );
    expect(bodies.map((b) => [b.type, b.data.after.name])).to.deep.equal([
      ['student.updated', '첫째변경'],
      ['student.updated', '둘째변경'],
    ]);
    expect(r.received.map((got) => got.headers['webhook-id'])).to.deep.equal(bodies.map((b) => `evt_${b.id}`));
    expect(Number(bodies[1]?.id)).to.be.greaterThan(Number(bodies[0]?.id));
    // Another secret does not verify it.
    const other = await store.rotate(webhook.id, OPERATOR);
    const first = r.received[0];
    expect(() => new Webhook(other.secret).verify(first?.body ?? '', first?.headers as Record<string, string>)).to.throw();
    const log = await deliveredLog(webhook.id, 2);
    expect(log.map((d) => [d.state, d.attempts.length, d.attempts[0]?.status])).to.deep.equal([
      ['DELIVERED', 1, 200],
      ['DELIVERED', 1, 200],
    ]);
  });

  it('a receiver failing three times then succeeding gets the event once more, with four attempts in the log, and later events after it', async () => {
    const r = await receiver([500, 503, 500]);
    const { webhook } = await store.create({ ownerAccountId: null, url: r.url, eventTypes: ['student.updated'] });
    startWorker([200, 200, 200]);
    await writer().updateStudent(1, { name: '재시도' });
    await writer().updateStudent(2, { name: '다음' });
    await eventually(() => r.delivered.length === 2, 20000, 'both events delivered');
    const names = r.received.map((got) => [got.status, (JSON.parse(got.body) as { data: { after: { name: string } } }).data.after.name]);
    expect(names).to.deep.equal([
      [500, '재시도'],
      [503, '재시도'],
      [500, '재시도'],
      [200, '재시도'],
      [200, '다음'],
    ]);
    // The same message id on every attempt, so a receiver drops repeats.
    expect(new Set(r.received.slice(0, 4).map((got) => got.headers['webhook-id'])).size).to.equal(1);
    const [, retried] = await deliveredLog(webhook.id, 2);
    expect(retried?.state).to.equal('DELIVERED');
    expect(retried?.attempts.map((a) => a.status)).to.deep.equal([500, 503, 500, 200]);
    expect(retried?.attempts[0]?.response).to.equal('failing with 500');
    expect(retried?.attempts.every((a) => a.durationMs >= 0 && !a.manual)).to.equal(true);
    const after = await store.find(webhook.id);
    expect([after?.state, after?.failures, after?.nextAttemptAt]).to.deep.equal(['ACTIVE', 0, null]);
  });

  it('a receiver down during a change gets it once it is back', async () => {
    const r = await receiver();
    const { webhook } = await store.create({ ownerAccountId: null, url: r.url, eventTypes: ['*'] });
    await r.close();
    startWorker([300, 300, 300, 300, 300, 300, 300, 300]);
    await writer().updateStudent(3, { name: '기다림' });
    await eventually(async () => ((await store.find(webhook.id))?.failures ?? 0) >= 2, 15000, 'failed attempts while down');
    const [pending] = await store.deliveriesOf(webhook.id, OPERATOR);
    expect(pending?.state).to.equal('PENDING');
    expect(pending?.attempts[0]?.status).to.equal(null);
    expect(pending?.attempts[0]?.response).to.match(/^no answer: ECONNREFUSED/);
    await r.open();
    await eventually(() => r.received.some((got) => got.body.includes('기다림')), 15000, 'the event after the receiver came back');
  });

  it('marks the webhook FAILING once the schedule is spent, mails its owner, and resumes from the failed event', async () => {
    const account = await new AccountStore(db).create({ email: 'owner@gsm.hs.kr', passwordHash: 'x', role: 'USER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], ownerAccountId: account._id });
    const r = await receiver([500, 500, 500]);
    const { webhook } = await store.create({ ownerAccountId: account._id, url: r.url, eventTypes: ['student.updated'] });
    startWorker([100, 100]);
    await writer().updateStudent(1, { name: '실패' });
    await eventually(async () => (await store.find(webhook.id))?.state === 'FAILING', 15000, 'FAILING');
    expect(r.received.map((got) => got.status)).to.deep.equal([500, 500, 500]);
    // The worker mails the owner after it has marked the webhook FAILING (src/events/delivery.ts).
    await eventually(() => outbox.list().length > 0, 5000, 'the mail to the owner');
    const [mail] = outbox.list();
    expect(mail?.to).to.equal('owner@gsm.hs.kr');
    expect(mail?.subject).to.equal('[캠퍼스 데이터 서비스 (Campus Data Service)] 웹훅 전송 실패 / Webhook failing');
    expect(mail?.text).to.include(webhook.id).and.include('failing with 500').and.not.include('whsec_');
    const [failed] = await store.deliveriesOf(webhook.id, OPERATOR);
    expect(failed?.state).to.equal('FAILED');
    // Nothing more is sent while failing.
    await writer().updateStudent(2, { name: '대기' });
    await new Promise((done) => setTimeout(done, 1200));
    expect(r.received).to.have.length(3);
    await store.setPaused(webhook.id, false, { accountId: account._id });
    await eventually(() => r.delivered.length === 2, 15000, 'both events after resuming');
    expect(r.delivered.map((got) => (JSON.parse(got.body) as { data: { after: { name: string } } }).data.after.name)).to.deep.equal([
      '실패',
      '대기',
    ]);
  });

  it("filters by the owner's key scopes exactly as the feed does", async () => {
    const account = await new AccountStore(db).create({ email: 'clubs@gsm.hs.kr', passwordHash: 'x', role: 'USER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['CLUB_READ'], ownerAccountId: account._id });
    const r = await receiver();
    await store.create({ ownerAccountId: account._id, url: r.url, eventTypes: ['*'] });
    startWorker([100]);
    // A student in a club: the student's event (STUDENT_READ) is not sent; the club's (its participant summary) is.
    const member = await db.models.students.findOne({ majorClubId: { $ne: null } }).lean();
    await writer().updateStudent(member?._id ?? 1, { name: '클럽원' });
    await eventually(() => r.received.length >= 1, 15000, 'the club event');
    await new Promise((done) => setTimeout(done, 1000));
    const types = r.received.map((got) => (JSON.parse(got.body) as { type: string }).type);
    expect(types.length).to.be.greaterThan(0);
    expect(types.every((t) => t === 'club.updated')).to.equal(true, types.join(','));
  });

  it("a TEACHER lowered to USER: its webhook stops receiving student events at once (its keys' scopes are worked out at each delivery)", async () => {
    const accounts = new AccountStore(db);
    const teacher = await accounts.create({ email: 'lowered.hooks@gsm.hs.kr', passwordHash: 'x', role: 'TEACHER' });
    const standing = await findStanding(db, teacher._id);
    if (!standing) throw new Error('no standing');
    // As the developer console asks: STUDENT_READ at once for a TEACHER.
    await new ApiKeyService(db, TEST_POLICY).request(standing, { scopes: ['STUDENT_READ'], label: 'roster' });
    const r = await receiver();
    await store.create({ ownerAccountId: teacher._id, url: r.url, eventTypes: ['student.updated'] });
    startWorker([100]);
    await writer().updateStudent(1, { name: '교사일때' });
    await eventually(() => r.delivered.length === 1, 15000, 'the event while a TEACHER');
    await accounts.updateRole(teacher._id, 'TEACHER', 'USER');
    await writer().updateStudent(2, { name: '사용자일때' });
    // A later event for another webhook shows the worker has moved past it.
    const probe = await receiver();
    await store.create({ ownerAccountId: null, url: probe.url, eventTypes: ['student.updated'] });
    await writer().updateStudent(3, { name: '확인용' });
    await eventually(() => probe.delivered.some((got) => got.body.includes('확인용')), 15000, 'the probe event');
    expect(r.delivered.map((got) => (JSON.parse(got.body) as { data: { after: { name: string } } }).data.after.name)).to.deep.equal([
      '교사일때',
    ]);
  });

  it("presents each event for its webhook: batch.completed without STUDENT_READ has counts only, and only an operator's webhook sees the actor's account", async () => {
    const accounts = new AccountStore(db);
    const clubApp = await accounts.create({ email: 'club.app@gsm.hs.kr', passwordHash: 'x', role: 'USER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['CLUB_READ'], ownerAccountId: clubApp._id });
    const teacher = await accounts.create({ email: 'teacher.hooks@gsm.hs.kr', passwordHash: 'x', role: 'TEACHER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], ownerAccountId: teacher._id });
    const [clubs, students, operator] = [await receiver(), await receiver(), await receiver()];
    const eventTypes = ['batch.completed'];
    const { webhook: clubHook } = await store.create({ ownerAccountId: clubApp._id, url: clubs.url, eventTypes });
    await store.create({ ownerAccountId: teacher._id, url: students.url, eventTypes });
    await store.create({ ownerAccountId: null, url: operator.url, eventTypes });
    startWorker([100]);
    // An administrator's change and its undo (its summary names the student), then an import (its file's name).
    const admin = { kind: 'ACCOUNT' as const, accountId: 7, email: 'admin@gsm.hs.kr' };
    const name = (await db.models.students.findById(1).lean())?.name ?? '';
    const changed = await new SchoolWriter(db, admin).updateStudent(1, { dormitoryRoom: 318 });
    await undoBatch(db, admin, changed.batchId ?? '', new Date());
    const csv = Buffer.from('학생명,학번,이메일,성별,학과,소속\r\n가져옴,2118,imported@gsm.hs.kr,여자,SW개발과,일반학생\r\n');
    await applyImport(db, CLI_ACTOR, 'STUDENT', '비밀명단.csv', csv, { timeZone: 'Asia/Seoul', now: new Date(), removeMissing: false });
    for (const r of [clubs, students, operator]) await eventually(() => r.delivered.length === 2, 15000, 'both batch.completed events');
    type Body = { type: string; actor: { kind: string; accountId: number | null }; data: { kind: string; summary: string | null } };
    const bodies = (r: TestReceiver) => r.delivered.map((got) => JSON.parse(got.body) as Body);

    expect(bodies(clubs).map((b) => [b.type, b.data])).to.deep.equal([
      ['batch.completed', { kind: 'UNDO', summary: null, records: 1, counts: { created: 0, updated: 1, deleted: 0 } }],
      ['batch.completed', { kind: 'IMPORT', summary: null, records: 1, counts: { created: 1, updated: 0, deleted: 0 } }],
    ]);
    for (const got of clubs.delivered) expect(got.body).not.to.include(name).and.not.to.include('비밀명단').and.not.to.include('가져옴');
    expect(bodies(students).map((b) => b.data.summary)).to.deep.equal([
      `undo of UPDATE student #1 ${name}`,
      'import 비밀명단.csv: 1 created, 0 updated, 0 removed, 0 unchanged',
    ]);
    // The actor's account: the operator's webhook only.
    expect(bodies(operator).map((b) => b.actor)).to.deep.equal([
      { kind: 'ACCOUNT', accountId: 7 },
      { kind: 'CLI', accountId: null },
    ]);
    for (const r of [clubs, students]) expect(bodies(r).map((b) => b.actor.accountId)).to.deep.equal([null, null]);
    // A redelivery is presented the same way.
    const [latest] = await deliveredLog(clubHook.id, 2);
    await redeliver({ db, store, policy: DEV }, latest?._id ?? '', OPERATOR);
    expect(clubs.received.at(-1)?.body).to.equal(clubs.delivered[1]?.body);
  });

  it("sends nothing while the owner's account is disabled; the events wait and arrive once it is enabled", async () => {
    const accounts = new AccountStore(db);
    const account = await accounts.create({ email: 'paused.owner@gsm.hs.kr', passwordHash: 'x', role: 'USER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], ownerAccountId: account._id });
    const r = await receiver();
    await store.create({ ownerAccountId: account._id, url: r.url, eventTypes: ['student.updated'] });
    await accounts.setDisabled(account._id, { at: new Date(), by: null });
    startWorker([100]);
    await writer().updateStudent(1, { name: '정지중' });
    await new Promise((done) => setTimeout(done, 1500));
    expect(r.received).to.have.length(0);
    await accounts.setDisabled(account._id, null);
    await eventually(() => r.delivered.length === 1, 15000, 'the event after enabling');
    expect(r.delivered[0]?.body).to.include('정지중');
  });

  it("an account's deletion takes its webhooks and their deliveries with it; other webhooks stay", async () => {
    const accounts = new AccountStore(db);
    const leaving = await accounts.create({ email: 'leaving.owner@gsm.hs.kr', passwordHash: 'x', role: 'USER' });
    await new ApiKeyService(db, TEST_POLICY).issue({ scopes: ['STUDENT_READ'], ownerAccountId: leaving._id });
    const r = await receiver();
    const { webhook: theirs } = await store.create({ ownerAccountId: leaving._id, url: r.url, eventTypes: ['student.updated'] });
    const { webhook: operators } = await store.create({ ownerAccountId: null, url: r.url, eventTypes: ['student.updated'] });
    startWorker([100]);
    await writer().updateStudent(1, { name: '떠나기전' });
    await eventually(() => r.delivered.length === 2, 15000, 'both deliveries');
    const deleted = await new AccountService(db).delete(leaving.email);
    expect(deleted.account.email).to.equal(leaving.email);
    expect(await store.webhooks.countDocuments({ _id: theirs.id })).to.equal(0);
    expect(await store.deliveries.countDocuments({ webhookId: theirs.id })).to.equal(0);
    expect(await store.webhooks.countDocuments({ _id: operators.id })).to.equal(1);
    expect(await store.deliveries.countDocuments({ webhookId: operators.id })).to.equal(1);
    const [entry] = await db.models.accessAudit.find({ action: 'ACCOUNT_DELETED' }).lean();
    expect(entry?.detail).to.deep.include({ webhooks: 1, apiKeys: 1 });
  });

  it('redelivers by hand and sends test events, each recorded as an attempt', async () => {
    const r = await receiver();
    const { webhook, secret } = await store.create({ ownerAccountId: null, url: r.url, eventTypes: ['student.*'] });
    startWorker([100]);
    await writer().updateStudent(1, { name: '다시' });
    await eventually(() => r.received.length === 1, 15000, 'the delivery');
    const [first] = await deliveredLog(webhook.id, 1);
    const again = await redeliver({ db, store, policy: DEV }, first?._id ?? '', OPERATOR);
    expect(again.attempt.ok).to.equal(true);
    expect(again.delivery.attempts.map((a) => a.manual)).to.deep.equal([false, true]);
    expect(r.received[1]?.body).to.equal(r.received[0]?.body);
    expect(r.received[1]?.headers['webhook-id']).to.equal(r.received[0]?.headers['webhook-id']);
    const test = await sendTestEvent({ db, store, policy: DEV }, webhook.id, OPERATOR);
    expect(test.attempt.ok).to.equal(true);
    const body = new Webhook(secret).verify(r.received[2]?.body ?? '', r.received[2]?.headers as Record<string, string>);
    expect(body).to.include({ type: 'webhook.test' });
    // Another account cannot reach it.
    await redeliver({ db, store, policy: DEV }, first?._id ?? '', { accountId: 999 }).then(
      () => expect.fail('redelivered for another account'),
      (err: Error) => expect(err.message).to.equal(`No delivery ${first?._id}.`),
    );
  });

  it('follows no redirects and caps what it reads of an answer', async () => {
    const target = await receiver();
    const { createServer } = await import('node:http');
    const redirecting = createServer((_req, res) => res.writeHead(307, { location: target.url }).end());
    const big = createServer((_req, res) => res.writeHead(200).end('x'.repeat(1_000_000)));
    await Promise.all([redirecting, big].map((s) => new Promise<void>((done) => s.listen(0, '127.0.0.1', () => done()))));
    const portOf = (s: typeof big) => (s.address() as { port: number }).port;
    try {
      const message = { secret: 'whsec_dGVzdA==', id: 'evt_1', body: '{}' };
      const redirected = await sendMessage({ ...message, url: `http://127.0.0.1:${portOf(redirecting)}/` }, DEV);
      expect([redirected.ok, redirected.status]).to.deep.equal([false, 307]);
      expect(target.received).to.have.length(0);
      const large = await sendMessage({ ...message, url: `http://127.0.0.1:${portOf(big)}/` }, DEV);
      expect([large.ok, large.status, large.response.length]).to.deep.equal([true, 200, 500]);
    } finally {
      redirecting.close();
      big.closeAllConnections();
      big.close();
    }
  });

  it('refuses private, loopback and metadata targets in production mode, metadata always, and on the address connected to', async () => {
    const refused = (url: string, policy: TargetPolicy) => {
      try {
        checkTargetUrl(url, policy);
        return 'allowed';
      } catch (err) {
        expect(err).to.be.instanceOf(UnsafeTargetError);
        return (err as Error).message;
      }
    };
    expect(refused('http://hooks.example.com/', PRODUCTION)).to.equal('url: must be an https:// address in production.');
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.10.10',
      '[::1]',
      '[fe80::1]',
      '[fd12::1]',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
      '100.64.0.1',
    ]) {
      expect(refused(`https://${host}/hook`, PRODUCTION)).to.match(
        /is a loopback, private, link-local or reserved address \(WEBHOOK_ALLOW_PRIVATE is off\)\.$/,
        host,
      );
    }
    expect(refused('https://169.254.169.254/latest/meta-data/', PRODUCTION)).to.equal('url: 169.254.169.254 is a cloud metadata address.');
    expect(refused('http://169.254.169.254/latest/meta-data/', DEV)).to.equal('url: 169.254.169.254 is a cloud metadata address.');
    expect(refused('https://[fd00:ec2::254]/', DEV)).to.equal('url: fd00:ec2::254 is a cloud metadata address.');
    expect(refused('https://user:pw@hooks.example.com/', PRODUCTION)).to.match(/must not hold a user name or password/);
    expect(refused('https://93.184.216.34/hook', PRODUCTION)).to.equal('allowed');
    expect(refused('http://127.0.0.1:9/hook', DEV)).to.equal('allowed');
    // A name is checked on the address it resolves to when the connection is made (DNS rebinding cannot pass).
    const r = await receiver();
    const byName = await sendMessage(
      { url: r.url.replace('127.0.0.1', 'localhost'), secret: 'whsec_dGVzdA==', id: 'evt_1', body: '{}' },
      {
        production: false,
        allowPrivate: false,
      },
    );
    expect(byName.status).to.equal(null);
    expect(byName.response).to.match(/^refused: url: localhost resolves to (127\.0\.0\.1|::1) is a loopback/);
    expect(r.received).to.have.length(0);
  });

  it(`allows at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account`, async () => {
    for (let i = 0; i < MAX_WEBHOOKS_PER_ACCOUNT; i++)
      await store.create({ ownerAccountId: 5, url: `http://127.0.0.1:9/${i}`, eventTypes: ['*'] });
    await store.create({ ownerAccountId: 5, url: 'http://127.0.0.1:9/11', eventTypes: ['*'] }).then(
      () => expect.fail('an 11th webhook was created'),
      (err: Error) => {
        expect(err).to.be.instanceOf(ConflictError);
        expect(err.message).to.equal('This account already has 10 webhooks, the most it may have; delete one first.');
      },
    );
    // Another account is not limited by it.
    await store.create({ ownerAccountId: 6, url: 'http://127.0.0.1:9/other', eventTypes: ['*'] });
  });
});
