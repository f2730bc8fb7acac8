// The hash floor (bench/lib.ts, measureHashFloor), alone in its process: argon2id password
// checks with the production parameters (src/oauth/secrets.ts), two at a time, for
// HASH_SECONDS after a short warm-up; prints one JSON line: checks a second, p50 and p99 in ms.
import { hashPassword, verifyPassword } from '../src/oauth/secrets.js';
import { percentile } from './lib.js';

const SECONDS = Number(process.env['HASH_SECONDS'] ?? 3);
const AT_ONCE = 2;
const WARM_UP_MS = 500;

const password = 'bench password of the hash floor';
const stored = await hashPassword(password);

/** Checks the password again and again until `stopAt`, returning each check's time in ms. */
async function checkUntil(stopAt: number): Promise<number[]> {
  const times: number[] = [];
  while (performance.now() < stopAt) {
    const started = performance.now();
    if (!(await verifyPassword(stored, password))) throw new Error('the hash floor: the password did not match its own hash');
    times.push(performance.now() - started);
  }
  return times;
}

const loops = (ms: number) => Promise.all(Array.from({ length: AT_ONCE }, () => checkUntil(performance.now() + ms)));
await loops(WARM_UP_MS);
const started = performance.now();
const times = (await loops(SECONDS * 1000)).flat().sort((a, b) => a - b);
const elapsed = (performance.now() - started) / 1000;
console.log(JSON.stringify({ rps: times.length / elapsed, p50: percentile(times, 0.5), p99: percentile(times, 0.99) }));
