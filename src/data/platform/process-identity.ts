import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * A process as the others sharing the database can name it (the audit log's "pid 4242 on
 * school-vm") and, from the same pid namespace, tell whether it still runs. The host name and pid
 * alone cannot tell that: two containers may share a host name and each run its own pid 7, and a
 * machine hands a pid out again once its process is gone. So a process also records the pid
 * namespace its pid is numbered in and when it started; a process that reads the same namespace
 * decides "gone" from those, and any other decides nothing (src/data/platform/lease.ts then waits for the
 * expiry).
 */
export interface ProcessIdentity {
  readonly pid: number;
  readonly host: string;
  /** The kernel's boot id and the pid namespace (`/proc/self/ns/pid`); null without a /proc that numbers pids as this process does. */
  readonly pidSpace: string | null;
  /** When the process started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`); null as above. */
  readonly pidStart: string | null;
}

let self: ProcessIdentity | undefined;

/** This process's identity (read once: none of it changes while the process lives). */
export function thisProcess(): ProcessIdentity {
  self ??= readIdentity();
  return self;
}

function readIdentity(): ProcessIdentity {
  const pidSpace = readPidSpace();
  const stat = pidSpace === null ? null : readStat(process.pid);
  return {
    pid: process.pid,
    host: hostname(),
    pidSpace: stat === null ? null : pidSpace,
    pidStart: stat === null || stat === 'gone' ? null : stat.start,
  };
}

function readPidSpace(): string | null {
  try {
    // A /proc mounted from another pid namespace numbers processes differently: no judgement then.
    if (readlinkSync('/proc/self') !== String(process.pid)) return null;
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return `${boot} ${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    // Not Linux (or no /proc): leases fall back to their expiry.
    return null;
  }
}

/**
 * True only when `p` ran in this process's pid namespace and no process with its pid and start
 * time runs there now (a zombie, killed but not yet reaped by its parent, counts as gone). False
 * whenever that cannot be told: another machine or container, no /proc, an unreadable entry.
 */
export function hasExited(p: Pick<ProcessIdentity, 'pid' | 'pidSpace' | 'pidStart'>): boolean {
  const mine = thisProcess().pidSpace;
  if (mine === null || p.pidSpace !== mine || !p.pidStart || !Number.isInteger(p.pid) || p.pid <= 0) return false;
  const stat = readStat(p.pid);
  if (stat === null) return false;
  return stat === 'gone' || stat.start !== p.pidStart || stat.state === 'Z' || stat.state === 'X';
}

/**
 * Whether a process with this pid runs on this machine now, judged from the pid alone (for files
 * that record no more, as the embedded database's lock and state files do). A zombie counts as
 * gone; without a /proc of this pid namespace, a signal 0 tells (EPERM: it runs, as another user).
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const stat = thisProcess().pidSpace === null ? null : readStat(pid);
  if (stat !== null) return stat !== 'gone' && stat.state !== 'Z' && stat.state !== 'X';
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's state letter and start time from /proc; 'gone' when there is no such process, null when unreadable. */
function readStat(pid: number): { state: string; start: string } | 'gone' | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : null;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state && start ? { state, start } : null;
}
