import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../src/data/database.js';
import { freePort } from '../../src/data/platform/embedded/index.js';
import { CLI_ACTOR } from '../../src/data/school/types.js';
import { SchoolWriter } from '../../src/data/school/writes.js';
import { seedDemoSchool } from '../../src/data/school/demo.js';
import { runCampus, startCampus, type RunningCampus } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { eventually, TestReceiver } from '../helpers/receiver.js';

/**
 * Webhooks through the real `campus` command: the operators' commands as README
 * documents them; `campus serve` delivering, killed with SIGKILL while a delivery is in flight and
 * started again (the event arrives: a lease, not a lock a crash leaves held); two `campus serve`
 * processes on one database delivering each event once, in order.
 */

interface Created {
  id: string;
  secret: string;
  url: string;
  eventTypes: string[];
  state: string;
}

describe('events and webhooks: webhooks with campus serve and the campus command', function () {
  this.timeout(240000);
  let db: Database & { uri: string; drop(): Promise<void> };
  const running: RunningCampus[] = [];
  const receivers: TestReceiver[] = [];

  const campus = async (args: string[]) => {
    const result = await runCampus({ MONGODB_URI: db.uri }, args);
    if (result.code !== 0) throw new Error(`campus ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
    return result.stdout;
  };

  async function serve(): Promise<RunningCampus> {
    const port = await freePort();
    const env = {
      MONGODB_URI: db.uri,
      HOST: '127.0.0.1',
      PORT: String(port),
      NEIS_SYNC_ENABLED: 'false',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2',
    };
    const started = await startCampus(env, ['serve', '--json']);
    running.push(started);
    return started;
  }

  async function receiver(): Promise<TestReceiver> {
    const r = await new TestReceiver().open();
    receivers.push(r);
    return r;
  }

  before(async () => {
    db = await createTestDatabase('webhooks_serve');
    await seedDemoSchool(db);
  });
  afterEach(async () => {
    for (const r of running.splice(0)) if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
    for (const r of receivers.splice(0)) await r.close();
  });
  after(async () => {
    await db.drop();
  });

  it('campus webhooks create | list | test | deliveries | redeliver | pause | resume | rotate | delete, each with --json and --help', async () => {
    const r = await receiver();
    const created = JSON.parse(
      await campus(['webhooks', 'create', '--url', r.url, '--events', 'student.*,batch.completed', '--json']),
    ) as Created;
    expect(created.id).to.match(/^wh_[0-9a-f]{16}$/);
    expect(created.secret).to.match(/^whsec_/);
    expect([created.url, created.eventTypes, created.state]).to.deep.equal([r.url, ['student.*', 'batch.completed'], 'ACTIVE']);
    const listed = JSON.parse(await campus(['webhooks', 'list', '--json'])) as Array<Created & { ownerEmail: string | null }>;
    expect(listed.map((w) => [w.id, w.ownerEmail, 'secret' in w])).to.deep.equal([[created.id, null, false]]);

    const tested = JSON.parse(await campus(['webhooks', 'test', created.id, '--json'])) as { id: string; state: string; type: string };
    expect([tested.state, tested.type]).to.deep.equal(['DELIVERED', 'webhook.test']);
    expect(new Webhook(created.secret).verify(r.received[0]?.body ?? '', r.received[0]?.headers as Record<string, string>)).to.include({
      type: 'webhook.test',
    });
    const again = JSON.parse(await campus(['webhooks', 'redeliver', tested.id, '--json'])) as {
      attempts: Array<{ status: number; manual: boolean }>;
    };
    expect(again.attempts.map((a) => [a.status, a.manual])).to.deep.equal([
      [200, true],
      [200, true],
    ]);
    const deliveries = JSON.parse(await campus(['webhooks', 'deliveries', created.id, '--json'])) as Array<{ id: string }>;
    expect(deliveries.map((d) => d.id)).to.deep.equal([tested.id]);
    expect(await campus(['webhooks', 'deliveries', created.id])).to.match(
      new RegExp(`^${tested.id}  webhook.test  DELIVERED  2 attempt\\(s\\)\\n    `),
    );

    expect((JSON.parse(await campus(['webhooks', 'pause', created.id, '--json'])) as Created).state).to.equal('PAUSED');
    expect((JSON.parse(await campus(['webhooks', 'resume', created.id, '--json'])) as Created).state).to.equal('ACTIVE');
    const rotated = JSON.parse(await campus(['webhooks', 'rotate', created.id, '--json'])) as Created;
    expect(rotated.secret)
      .to.match(/^whsec_/)
      .and.not.equal(created.secret);

    const refused = await runCampus({ MONGODB_URI: db.uri }, ['webhooks', 'create', '--url', 'http://169.254.169.254/', '--events', '*']);
    expect([refused.code, refused.stderr]).to.deep.equal([1, 'campus: url: 169.254.169.254 is a cloud metadata address.\n']);
    const unknown = await runCampus({ MONGODB_URI: db.uri }, ['webhooks', 'create', '--url', r.url, '--events', 'student.moved']);
    expect(unknown.stderr).to.match(/^campus: events: unknown student\.moved; use student\.created, /);

    expect(await campus(['webhooks', 'delete', created.id])).to.equal(`Deleted webhook ${created.id} (${r.url}).\n`);
    expect(JSON.parse(await campus(['webhooks', 'list', '--json']))).to.deep.equal([]);
    for (const command of ['create', 'list', 'delete', 'deliveries', 'redeliver', 'test', 'rotate', 'pause', 'resume']) {
      const help = await campus(['webhooks', command, '--help']);
      expect(help, command).to.include('--json');
    }
  });

  it('delivers an event whose delivery a SIGKILL interrupted, once campus serve is started again', async () => {
    const r = await receiver();
    r.hold = true;
    const created = JSON.parse(await campus(['webhooks', 'create', '--url', r.url, '--events', 'student.updated', '--json'])) as Created;
    const first = await serve();
    await new SchoolWriter(db, CLI_ACTOR).updateStudent(4, { name: '중단전' });
    // The request is at the receiver, unanswered: the service dies between the change and its delivery.
    await eventually(() => r.arrived === 1, 20000, 'the delivery in flight');
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));
    r.hold = false;
    await serve();
    await eventually(() => r.delivered.length === 1, 30000, 'the event after the restart');
    expect(
      new Webhook(created.secret).verify(r.delivered[0]?.body ?? '', r.delivered[0]?.headers as Record<string, string>),
    ).to.deep.include({ type: 'student.updated' });
    const deliveries = JSON.parse(await campus(['webhooks', 'deliveries', created.id, '--json'])) as Array<{
      state: string;
      attempts: Array<{ status: number }>;
    }>;
    expect(deliveries.map((d) => [d.state, d.attempts.map((a) => a.status)])).to.deep.equal([['DELIVERED', [200]]]);
    await campus(['webhooks', 'delete', created.id]);
  });

  it('two campus serve processes on one database deliver each event once, in order', async () => {
    const r = await receiver();
    const created = JSON.parse(await campus(['webhooks', 'create', '--url', r.url, '--events', 'student.updated', '--json'])) as Created;
    await Promise.all([serve(), serve()]);
    const writer = new SchoolWriter(db, CLI_ACTOR);
    for (let i = 1; i <= 12; i++) await writer.updateStudent(i, { name: `두프로세스${i}` });
    await eventually(() => r.received.length >= 12, 30000, 'twelve deliveries');
    // Give a second delivery of any of them the time to arrive.
    await new Promise((done) => setTimeout(done, 2000));
    const bodies = r.received.map((got) => JSON.parse(got.body) as { id: string; data: { after: { name: string } } });
    expect(bodies.map((b) => b.data.after.name)).to.deep.equal(Array.from({ length: 12 }, (_, i) => `두프로세스${i + 1}`));
    const ids = bodies.map((b) => Number(b.id));
    expect(ids).to.deep.equal([...ids].sort((a, b) => a - b));
    await campus(['webhooks', 'delete', created.id]);
  });
});
