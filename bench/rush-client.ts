// The rush's load generator (bench/rush.ts), in its own process so that its work does not share
// the server's or the parent's event loop: reads its plan as JSON on stdin, starts each account's
// sign-in (bench/signin.ts) at its own random moment in [0, seconds), whatever the others are
// doing (open arrival), and prints one JSON line of results (RushResult).
import { Agent } from 'node:http';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { signIn, SignInError, type SignInApp } from './signin.js';

/** What bench/rush.ts sends. */
export interface RushPlan {
  readonly app: SignInApp;
  readonly password: string;
  readonly emails: readonly string[];
  readonly seconds: number;
}

/** What this process prints. */
export interface RushResult {
  /** Authorize to tokens of each successful sign-in, ms, ascending. */
  readonly tokensMs: number[];
  /** From the clock's start to the end of the last sign-in (its userinfo included), ms. */
  readonly lastFinishMs: number;
  readonly errors: number;
  /** Each distinct error with how often it came, in the order they first came. */
  readonly distinctErrors: [string, number][];
  /** CPU time this process used while the clock ran, ms (user + system). */
  readonly loadCpuMs: number;
}

const plan = JSON.parse(await text(process.stdin)) as RushPlan;
const agent = new Agent({ keepAlive: true });
const starts = plan.emails.map(() => Math.random() * plan.seconds * 1000);
const tokensMs: number[] = [];
const distinct = new Map<string, number>();
let errors = 0;
let lastFinishMs = 0;

const cpuBefore = process.cpuUsage();
const clock = performance.now();
await Promise.all(
  plan.emails.map(async (email, i) => {
    await sleep(starts[i] ?? 0);
    try {
      tokensMs.push((await signIn(plan.app, { email, password: plan.password }, { agent })).tokensMs);
    } catch (err) {
      errors++;
      const said = err instanceof SignInError ? err.message : String(err);
      distinct.set(said, (distinct.get(said) ?? 0) + 1);
    }
    lastFinishMs = Math.max(lastFinishMs, performance.now() - clock);
  }),
);
const cpu = process.cpuUsage(cpuBefore);
agent.destroy();
const result: RushResult = {
  tokensMs: tokensMs.sort((a, b) => a - b),
  lastFinishMs,
  errors,
  distinctErrors: [...distinct],
  loadCpuMs: (cpu.user + cpu.system) / 1000,
};
console.log(JSON.stringify(result));
