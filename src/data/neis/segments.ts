import { addDays } from '../../calendar.js';
import type { Segment } from '../models/neis-state.model.js';

/**
 * Pure bookkeeping of which sync generation serves which dates. Segments never overlap and are
 * kept ordered by date, so reading them in order yields rows in date order.
 */

/** Puts `next` in place over whatever served its dates; returns the new list and what it replaced. */
export function replaceRange(segments: readonly Segment[], next: Segment): { segments: Segment[]; retired: Segment[] } {
  const kept: Segment[] = [];
  const retired: Segment[] = [];
  for (const s of segments) {
    if (s.to < next.from || s.from > next.to) {
      kept.push(s);
      continue;
    }
    retired.push({ generation: s.generation, from: max(s.from, next.from), to: min(s.to, next.to) });
    if (s.from < next.from) kept.push({ generation: s.generation, from: s.from, to: addDays(next.from, -1) });
    if (s.to > next.to) kept.push({ generation: s.generation, from: addDays(next.to, 1), to: s.to });
  }
  kept.push({ ...next });
  kept.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  return { segments: kept, retired };
}

/** The parts of `segments` inside `from`..`to`, clipped to it, in date order. */
export function segmentsWithin(segments: readonly Segment[], from: string, to: string): Segment[] {
  return segments
    .filter((s) => s.to >= from && s.from <= to)
    .map((s) => ({ generation: s.generation, from: max(s.from, from), to: min(s.to, to) }))
    .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/** True when some segment serves `date`. */
export function covers(segments: readonly Segment[], date: string): boolean {
  return segments.some((s) => s.from <= date && date <= s.to);
}

function max(a: string, b: string): string {
  return a > b ? a : b;
}

function min(a: string, b: string): string {
  return a < b ? a : b;
}
