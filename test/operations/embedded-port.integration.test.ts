import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { acquireEmbeddedDatabase, freePort, type EmbeddedDatabase } from '../../src/data/platform/embedded/index.js';

/** Listens on 127.0.0.1:port until closed: another process holding the embedded database's port. */
async function hold(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done());
  });
  return server;
}

/** Writes a document naming `tag` in the database and reads back every tag it holds. */
async function tagsAfterWriting(uri: string, tag: string): Promise<string[]> {
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    const tags = client.db().collection<{ tag: string }>('tags');
    await tags.insertOne({ tag });
    return (await tags.find({}).toArray()).map((doc) => doc.tag);
  } finally {
    await client.close();
  }
}

/**
 * The embedded database takes its port by binding it (src/data/platform/embedded/index.ts, startFerretDb):
 * when something holds the preferred port, even one that was free a moment before, it starts on a
 * port the kernel picks instead of failing with "address already in use" or, worse, handing out
 * the address of another process's database.
 */
describe('operations: the embedded database takes its port atomically (src/data/platform/embedded/index.ts)', function () {
  this.timeout(60000);
  let dir: string;
  const started: EmbeddedDatabase[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'campus-port-'));
  });
  afterEach(async () => {
    for (const db of started.splice(0)) await db.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with its preferred port held by another listener, it starts on another port and serves its own data there', async () => {
    const port = await freePort();
    const other = await hold(port);
    try {
      const db = await acquireEmbeddedDatabase({ dataDir: join(dir, 'a'), preferredPort: port });
      started.push(db);
      expect(db.engine).to.equal('ferretdb');
      const bound = Number(new URL(db.uri).port);
      expect(bound).to.be.greaterThan(0).and.not.equal(port);
      expect(await tagsAfterWriting(db.uri, 'a')).to.deep.equal(['a']);
      // The state file other commands read names the port it got.
      expect(JSON.parse(readFileSync(join(dir, 'a', 'embedded-db.json'), 'utf8'))).to.include({ uri: db.uri });
    } finally {
      await new Promise((done) => other.close(done));
    }
  });

  it('two started at once for two data directories with the same preferred port: one gets it, the other another; each keeps its own data', async () => {
    const port = await freePort();
    const start = (name: string) => acquireEmbeddedDatabase({ dataDir: join(dir, name), preferredPort: port });
    const [a, b] = await Promise.all([start('a'), start('b')]);
    started.push(a, b);
    const ports = [a, b].map((db) => Number(new URL(db.uri).port));
    expect(ports).to.include(port);
    expect(ports[0]).to.not.equal(ports[1]);
    expect(await tagsAfterWriting(a.uri, 'a')).to.deep.equal(['a']);
    expect(await tagsAfterWriting(b.uri, 'b')).to.deep.equal(['b']);
  });

  it('freePort picks free ports below the kernel’s ephemeral range, which outgoing connections take from', async () => {
    const [ephemeralStart = 32768] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).to.be.within(20000, ephemeralStart - 1);
    // Free indeed: each can be listened on.
    for (const port of ports.slice(0, 3)) await new Promise((done) => void hold(port).then((server) => server.close(done)));
  });
});
