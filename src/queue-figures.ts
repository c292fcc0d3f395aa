// Queue-wide figures kept in the store for stats(): the wait of recent admissions, as
// one small histogram per minute, and the entry checkpoints it is measured from.
// lua/includes/queueFigures.lua keeps the same figures in Redis; MemoryStore uses the
// helpers below, so both stores answer alike.

import { rateInForce } from './admission-control.js';
import { observedRate } from './admission-window.js';
import type { StatsSnapshot } from './store/store.js';
import type { AdmissionOptions, QueueStats, WaitFigures, WaitSlot } from './types.js';

/** Minutes of admissions the wait figures cover (by whole minutes: the last 9 to 10). */
export const WAIT_SLOTS = 10;
export const WAIT_SLOT_MS = 60_000;
/** Bins: 0 is [0, 10 ms); bin k is [edge(k), edge(k + 1)), each 2^(1/4) (19%) wider than the last. */
const FIRST_EDGE_MS = 10;
const BINS_PER_DOUBLING = 4;
/** The last bin is open-ended: from about 78 hours. */
export const LAST_WAIT_BIN = 100;
/** An entry checkpoint is written at most this often (a member's entry time is known to within it). */
export const CHECKPOINT_MS = 1000;

export type { WaitSlot } from './types.js';

/** Lower edge of bin k ≥ 1, whole ms (the same integers as the Lua script's). */
function edgeMs(bin: number): number {
  return Math.floor(FIRST_EDGE_MS * 2 ** ((bin - 1) / BINS_PER_DOUBLING));
}

/** The histogram bin of a wait of `ms` milliseconds. */
export function waitBin(ms: number): number {
  if (ms < FIRST_EDGE_MS) return 0;
  let bin = Math.min(LAST_WAIT_BIN, Math.floor(BINS_PER_DOUBLING * Math.log2(ms / FIRST_EDGE_MS)) + 1);
  // The logarithm can land one bin off at an edge: the integer edges decide.
  while (bin < LAST_WAIT_BIN && ms >= edgeMs(bin + 1)) bin++;
  while (bin > 1 && ms < edgeMs(bin)) bin--;
  return bin;
}

/** The value a bin stands for: the geometric middle of its edges (at most 9% off any wait in it). */
function binValueMs(bin: number): number {
  if (bin === 0) return FIRST_EDGE_MS / 2;
  return FIRST_EDGE_MS * 2 ** ((bin - 0.5) / BINS_PER_DOUBLING);
}

/** Adds waits (ms) to the current minute's slot of `slots` (a ring of WAIT_SLOTS), as the Lua script does. */
export function recordWaits(slots: Array<WaitSlot | undefined>, now: number, waitsMs: readonly number[]): void {
  if (waitsMs.length === 0) return;
  const minute = Math.floor(now / WAIT_SLOT_MS);
  const index = minute % WAIT_SLOTS;
  let slot = slots[index];
  if (!slot || slot.minute !== minute) slot = slots[index] = { minute, maxMs: 0, counts: new Map() };
  for (const raw of waitsMs) {
    const ms = Math.max(0, raw);
    const bin = waitBin(ms);
    slot.counts.set(bin, (slot.counts.get(bin) ?? 0) + 1);
    slot.maxMs = Math.max(slot.maxMs, ms);
  }
}

/** A slot as lua/includes/queueFigures.lua stores it: "<minute>|<maxMs>|<bin>:<count>,...". */
export function parseWaitSlot(raw: string | null | undefined): WaitSlot | undefined {
  const match = typeof raw === 'string' ? /^(\d+)\|(\d+)\|(.*)$/.exec(raw) : null;
  if (!match) return undefined;
  const counts = new Map<number, number>();
  for (const pair of match[3]!.split(',')) {
    const [bin, count] = pair.split(':').map(Number);
    if (Number.isInteger(bin) && Number.isInteger(count)) counts.set(bin!, count!);
  }
  return { minute: Number(match[1]), maxMs: Number(match[2]), counts };
}

/** p50, p90 (nearest rank, from the bins) and max of the slots of the last WAIT_SLOTS minutes, in seconds. */
export function waitFigures(slots: ReadonlyArray<WaitSlot | undefined>, now: number): WaitFigures {
  const minute = Math.floor(now / WAIT_SLOT_MS);
  const counts = new Map<number, number>();
  let count = 0;
  let maxMs = 0;
  for (const slot of slots) {
    if (!slot || slot.minute <= minute - WAIT_SLOTS || slot.minute > minute) continue;
    for (const [bin, n] of slot.counts) {
      counts.set(bin, (counts.get(bin) ?? 0) + n);
      count += n;
    }
    maxMs = Math.max(maxMs, slot.maxMs);
  }
  if (count === 0) return { p50: 0, p90: 0, max: 0, count: 0 };
  const bins = [...counts.keys()].sort((a, b) => a - b);
  const percentile = (q: number): number => {
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (const bin of bins) {
      seen += counts.get(bin)!;
      if (seen >= rank) return Math.min(binValueMs(bin), maxMs);
    }
    return maxMs;
  };
  const seconds = (ms: number) => Math.round(ms) / 1000;
  return { p50: seconds(percentile(0.5)), p90: seconds(percentile(0.9)), max: seconds(maxMs), count };
}

/**
 * Entry checkpoints (mirrors the `entries` key): entry score -> the time an entry with
 * that score was made, at most one a CHECKPOINT_MS. A member's entry time is that of
 * the last checkpoint at or below its score (at most a second early).
 */
export class EntryCheckpoints {
  /** By increasing score. */
  readonly #points: Array<{ score: number; at: number }> = [];
  #lastAt: number | null = null;

  /** An entry with `score` was made at `now`. */
  note(score: number, now: number): void {
    if (this.#lastAt !== null && now - this.#lastAt < CHECKPOINT_MS) return;
    this.#points.push({ score, at: now });
    this.#lastAt = now;
  }

  /** When the member with this score entered (to within a second); null if unknown. */
  entryTime(score: number): number | null {
    const i = this.#lastAtOrBelow(score);
    return i < 0 ? null : this.#points[i]!.at;
  }

  /** Forgets the checkpoints no waiting member needs: below the head's own (headScore null: all but the last). */
  trim(headScore: number | null): void {
    const keepFrom = headScore === null ? this.#points.length - 1 : this.#lastAtOrBelow(headScore);
    if (keepFrom > 0) this.#points.splice(0, keepFrom);
  }

  get size(): number {
    return this.#points.length;
  }

  #lastAtOrBelow(score: number): number {
    let lo = 0;
    let hi = this.#points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#points[mid]!.score <= score) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
}

/** The public stats of a store's snapshot: the admitted rate observed, the rate in force, the totals and waits. */
export function queueStats(s: StatsSnapshot, options: { admitRatePerSecond: number; admission?: AdmissionOptions }): QueueStats {
  const abandoned = s.abandoned ?? s.totals?.abandoned ?? 0;
  return {
    waiting: s.waiting,
    active: s.active,
    claimed: s.claimed,
    admittedPerSecond: observedRate(s.window, s.now),
    admitRatePerSecond: rateInForce(s.pinnedRate, s.adaptiveRate, options),
    abandoned,
    totals: { ...(s.totals ?? { entered: 0, admitted: 0, abandoned, consumed: 0, expired: 0 }), shadowed: 0 },
    waitSeconds: waitFigures(s.waitSlots ?? [], s.now),
    ...(s.lanes && { lanes: s.lanes }),
  };
}
