import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase, type Database } from '../src/data/database.js';
import { lastSequence } from '../src/data/events/outbox.js';
import { applyImport } from '../src/data/school/import.js';
import { CLI_ACTOR } from '../src/data/school/types.js';
import { seedDemoSchool } from '../src/data/school/demo.js';
import { WebhookStore, WEBHOOK_SECRET_PURPOSE } from '../src/data/events/webhooks.js';
import { WebhookDelivery } from '../src/events/delivery.js';
import { createLogger } from '../src/logger.js';
import { CookieSealer } from '../src/surfaces/web/seal.js';
import { benchDatabase, BENCH_POLICY } from './lib.js';
import { everySpecialtyChanged } from './school.js';

/** Student records the import changes (every one). */
const STUDENTS = 1000;
const OPTIONS = { timeZone: 'Asia/Seoul', now: new Date('2026-03-02T09:00:00+09:00') };
/** The target: the last event of the import at the receiver within this long of the apply's end. */
const TARGET_SECONDS = 60;

/**
 * Webhooks under an import: a 1,000-row import that changes every student record, applied
 * through the one write path, once without a webhook and once with one whose receiver listens on a
 * local port, the delivery worker of `campus serve` (src/events/delivery.ts) running in the same
 * process. Reports how long from the apply's end to the last event at the receiver (each event one
 * signed POST, in order), and how much the apply slowed while the worker delivered.
 */
export async function runWebhooksBench(): Promise<boolean> {
  const database = await benchDatabase('bench-webhooks');
  const db = await openDatabase(database.uri, { backendIndexes: database.indexer });
  let received = 0;
  let lastAt = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', () => done()));
  const store = new WebhookStore(db, new CookieSealer(['a key only this bench uses, long enough'], WEBHOOK_SECRET_PURPOSE), BENCH_POLICY);
  const delivery = new WebhookDelivery({
    db,
    store,
    policy: { production: false, allowPrivate: true },
    retryScheduleMs: [1000],
    logger: createLogger('silent'),
    sendMail: async () => {},
    consoleUrl: 'http://127.0.0.1/console/webhooks',
  });
  try {
    await db.connection.dropDatabase();
    await db.ensureIndexes();
    await seedDemoSchool(db, { students: STUDENTS });
    const count = await db.models.students.countDocuments();

    const plain = await timedImport(db, 'without');
    // Every event of the import: student, club and project events and batch.completed.
    await store.create({ ownerAccountId: null, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, eventTypes: ['*'] });
    delivery.start();
    const before = await lastSequence(db);
    const started = performance.now();
    const withHook = await timedImport(db, 'with');
    const applied = performance.now();
    const events = (await lastSequence(db)) - before;
    while (received < events) await new Promise((done) => setTimeout(done, 20));
    const deliverySeconds = (lastAt - applied) / 1000;
    const totalSeconds = (lastAt - started) / 1000;
    const slower = (withHook / plain - 1) * 100;

    console.log(`\nWebhooks under an import (${count.toLocaleString('en')} student records, every one changed; one run each)`);
    console.log(`  import apply without a webhook                       ${plain.toFixed(2).padStart(7)} s`);
    console.log(
      `  import apply with one webhook delivering             ${withHook.toFixed(2).padStart(7)} s   (${slower >= 0 ? '+' : ''}${slower.toFixed(0)}%)`,
    );
    const met = deliverySeconds <= TARGET_SECONDS;
    console.log(
      `  apply's end to the last of ${events.toLocaleString('en')} events delivered   ${deliverySeconds.toFixed(2).padStart(7)} s   (apply start to last: ${totalSeconds.toFixed(2)} s; target <= ${TARGET_SECONDS} s: ${met ? 'met' : 'MISSED'})`,
    );
    return met;
  } finally {
    await delivery.stop();
    receiver.close();
    await db.close();
    await database.stop();
  }
}

/** Applies an import that changes every student's 전문분야 (specialty) to `<tag> <n>`; its seconds. */
async function timedImport(db: Database, tag: string): Promise<number> {
  const changed = await everySpecialtyChanged(db, tag);
  const started = performance.now();
  const result = await applyImport(db, CLI_ACTOR, 'STUDENT', 'bench.csv', Buffer.from(changed), OPTIONS);
  if (!result.applied) throw new Error(`the bench import was refused: ${JSON.stringify(result.issues.slice(0, 3))}`);
  return (performance.now() - started) / 1000;
}
