import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import type { Database } from '../../src/data/database.js';
import { Lease, type LeaseDoc } from '../../src/data/platform/lease.js';
import { thisProcess } from '../../src/data/platform/process-identity.js';
import { createTestDatabase } from '../helpers/database.js';

/*
 * The lease (src/data/platform/lease.ts) between real processes: who may take a lease over and when, and
 * its fencing token. A holder is judged dead only from its own pid namespace (two containers may
 * share a host name and a pid); any other holder lives out its expiry.
 */

/**
 * A process that takes the lease `id` through the built module (dist/, what `campus` runs) and
 * prints `{"token":n,"pid":p}` or `null`; with `hold` it keeps the lease until killed. With
 * `otherPidSpace` it runs in a pid namespace of its own (as another container on this host would,
 * with the same host name), through unshare(1).
 */
async function leaseProcess(
  uri: string,
  id: string,
  options: { waitMs: number; hold?: boolean; otherPidSpace?: boolean },
): Promise<{ child: ChildProcessWithoutNullStreams; answer: { token: number; pid: number } | null }> {
  const script = `
    const [{ Lease }, { MongoClient }] = await Promise.all([import('./dist/data/platform/lease.js'), import('mongodb')]);
    const client = await MongoClient.connect(process.env.LEASE_URI);
    const lease = await Lease.acquire(client.db(), process.env.LEASE_ID, { waitMs: Number(process.env.LEASE_WAIT_MS) });
    console.log(JSON.stringify(lease ? { token: lease.token, pid: process.pid } : null));
    if (process.env.LEASE_HOLD === '1') setInterval(() => {}, 1000);
    else {
      await lease?.release();
      await client.close();
    }`;
  const node = [process.execPath, '--input-type=module', '-e', script];
  const [command = '', ...args] = options.otherPidSpace ? [...UNSHARE, ...node] : node;
  const child = spawn(command, args, {
    env: { ...process.env, LEASE_URI: uri, LEASE_ID: id, LEASE_WAIT_MS: String(options.waitMs), LEASE_HOLD: options.hold ? '1' : '0' },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const line = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout }).once('line', done);
    child.once('exit', (code) => fail(new Error(`exited with ${code}: ${stderr}`)));
  });
  return { child, answer: JSON.parse(line) as { token: number; pid: number } | null };
}

/** A new pid namespace (and /proc to match) without privileges: a user namespace maps this user to root. */
const UNSHARE = ['unshare', '--pid', '--fork', '--mount-proc', '--user', '--map-root-user', '--kill-child'];

function exited(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

describe('operations: the lease between processes, takeover and fencing token', function () {
  this.timeout(60_000);
  let db: Database & { readonly uri: string; drop(): Promise<void> };
  const leases = () => db.client.db().collection<LeaseDoc>('meta');

  before(async () => {
    db = await createTestDatabase('lease');
  });
  after(async () => {
    await db?.drop();
  });

  /** A lease document as another process wrote it (the fields src/data/platform/lease.ts writes). */
  function storedLease(id: string, holder: Pick<LeaseDoc, 'pid' | 'pidSpace' | 'pidStart'>, expiresInMs = 15_000): LeaseDoc {
    const now = Date.now();
    return {
      _id: id,
      owner: randomUUID(),
      token: 7,
      host: hostname(),
      ...holder,
      takenAt: new Date(now),
      expiresAt: new Date(now + expiresInMs),
    };
  }

  it('a living holder in another pid namespace of this host (same host name) keeps its lease, and this process keeps its own from it: a pid is not looked up outside its namespace', async function () {
    if (spawnSync(UNSHARE[0] ?? '', [...UNSHARE.slice(1), 'true']).status !== 0) this.skip();
    const id = `lease-test:${randomUUID()}`;
    const held = await Lease.acquire(db.client.db(), id, { waitMs: 0 });
    expect(held, 'this process takes the free lease').to.not.equal(null);
    try {
      // The other container sees this process's pid as absent from its own pid namespace.
      const other = await leaseProcess(db.uri, id, { waitMs: 1500, otherPidSpace: true });
      expect(other.answer, 'the other pid namespace did not take a living lease').to.equal(null);
      await exited(other.child);
      expect(await held?.stillHeld()).to.equal(true);
      expect(await leases().findOne({ _id: id })).to.include({ owner: held?.doc.owner, token: held?.token, pid: process.pid });
    } finally {
      await held?.release();
    }
    // And the other way round: this process does not take over the other namespace's living lease.
    const other = await leaseProcess(db.uri, id, { waitMs: 0, hold: true, otherPidSpace: true });
    try {
      expect(other.answer?.token, 'a later acquisition, a greater token').to.be.above(held?.token ?? Infinity);
      expect(await Lease.acquire(db.client.db(), id, { waitMs: 1000 })).to.equal(null);
    } finally {
      other.child.kill('SIGKILL');
      await exited(other.child);
    }
  });

  it('a lease stored by another container with this very host name and pid (or a pid not running here) is not taken over while it lives; once expired it is, with a greater token', async () => {
    const elsewhere = { pidSpace: `${randomUUID()} pid:[4026531836]`, pidStart: '12345' };
    for (const pid of [process.pid, 2 ** 22 + 1]) {
      const id = `lease-test:${randomUUID()}`;
      const stored = storedLease(id, { pid, ...elsewhere });
      await leases().insertOne(stored);
      const heard: LeaseDoc[] = [];
      expect(await Lease.acquire(db.client.db(), id, { waitMs: 500, onTakeover: (previous) => heard.push(previous) })).to.equal(null);
      expect(heard).to.deep.equal([]);
      expect(await leases().findOne({ _id: id })).to.deep.equal(stored);

      await leases().updateOne({ _id: id }, { $set: { expiresAt: new Date(Date.now() - 1) } });
      const taken = await Lease.acquire(db.client.db(), id, { waitMs: 0, onTakeover: (previous) => heard.push(previous) });
      expect(taken?.token).to.equal(stored.token + 1);
      expect(heard.map((h) => h.owner)).to.deep.equal([stored.owner]);
      await taken?.release();
    }
  });

  it('a holder of this pid namespace that was killed (kill -9) is taken over at once, and so is one whose pid now belongs to another process', async function () {
    if (thisProcess().pidSpace === null) this.skip();
    const id = `lease-test:${randomUUID()}`;
    const killed = await leaseProcess(db.uri, id, { waitMs: 0, hold: true });
    expect(killed.answer).to.include({ pid: killed.child.pid });
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    const started = Date.now();
    const heard: LeaseDoc[] = [];
    const taken = await Lease.acquire(db.client.db(), id, { waitMs: 5000, onTakeover: (previous) => heard.push(previous) });
    expect(Date.now() - started, 'at once, not after the 15 s expiry').to.be.below(2000);
    expect(heard.map((h) => h.pid)).to.deep.equal([killed.child.pid]);
    expect(taken?.token).to.be.above(killed.answer?.token ?? Infinity);
    await taken?.release();

    // The pid recorded is alive (it is this process's), but it started at another time: another process.
    const reused = storedLease(id, { pid: process.pid, pidSpace: thisProcess().pidSpace, pidStart: '1' });
    await leases().insertOne(reused);
    const again = await Lease.acquire(db.client.db(), id, { waitMs: 0 });
    expect(again?.token).to.equal(reused.token + 1);
    await again?.release();
  });

  it('each acquisition gets a greater token; a holder that stalled past its expiry fails the fencing check from then on, and its release leaves its successor the lease', async () => {
    const id = `lease-test:${randomUUID()}`;
    const first = await Lease.acquire(db.client.db(), id, { waitMs: 0, ttlMs: 600 });
    expect(first?.token).to.equal(1);
    expect(await first?.stillHeld()).to.equal(true);
    // This whole process stops for longer than the lease lasts (a long pause): no renewal runs.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);
    const second = await Lease.acquire(db.client.db(), id, { waitMs: 2000 });
    expect(second?.token).to.equal(2);
    expect(await first?.stillHeld(), 'the stalled holder is fenced out').to.equal(false);
    await first?.release();
    expect(await leases().findOne({ _id: id })).to.include({ token: 2 });
    expect(await second?.stillHeld()).to.equal(true);
    await second?.release();
    const third = await Lease.acquire(db.client.db(), id, { waitMs: 0 });
    expect(third?.token).to.equal(3);
    await third?.release();
  });
});
