// Invite codes and lanes (SPEC §17): the rules both stores share. lua/includes/lanes.lua
// and lua/includes/laneAdmission.lua do the same in Redis.

import { z } from 'zod';
import type { Lane, LaneStats } from './types.js';

export type { Lane, LaneStats };

/** A lane's band of scores: lane i holds scores [i · LANE_SPAN, (i + 1) · LANE_SPAN). 2^40: every score stays an exact double. */
export const LANE_SPAN = 2 ** 40;
/** The most named lanes a queue stores (lua/includes/lanes.lua MAX_LANES). */
export const MAX_LANES = 8;
/** The most codes one store call adds (lua/addCodes-2.lua MAX_CODES); `addCodes` sends more in several calls. */
export const MAX_CODES_PER_CALL = 1000;
/** The name stats() gives the lane of members who entered without a code. */
export const DEFAULT_LANE = 'default';

const NAME = /^[A-Za-z0-9._-]{1,32}$/;

/** The `lanes` option: at most MAX_LANES, distinct names (not `default`), shares in (0, 1] adding up to at most 1. */
export const lanesSchema = z
  .array(
    z.strictObject({
      name: z
        .string()
        .regex(NAME, 'must be 1-32 characters of A-Z a-z 0-9 . _ -')
        .refine((name) => name !== DEFAULT_LANE, `"${DEFAULT_LANE}" is the lane of members without a code`),
      share: z.number().gt(0).max(1),
    }),
  )
  .max(MAX_LANES)
  .refine((lanes) => new Set(lanes.map((l) => l.name)).size === lanes.length, 'lane names must be distinct')
  .refine((lanes) => lanes.reduce((sum, l) => sum + l.share, 0) <= 1 + 1e-9, 'the shares must add up to at most 1');

/** An invite code: 1-64 characters of A-Z a-z 0-9 . _ - (anything else is never a stored code). */
export const CODE = /^[A-Za-z0-9._-]{1,64}$/;

/** The lanes as the store keeps them (meta ln): "name=share,...". */
export function formatLanes(lanes: readonly Lane[]): string {
  return lanes.map((l) => `${l.name}=${l.share}`).join(',');
}

export function parseLanes(ln: string | null | undefined): Lane[] {
  if (!ln) return [];
  return ln.split(',').map((part) => {
    const at = part.indexOf('=');
    return { name: part.slice(0, at), share: Number(part.slice(at + 1)) };
  });
}

/** The stored lanes with the caller's: a stored lane keeps its index and takes the share given; a new one is appended. */
export function mergeLanes(stored: readonly Lane[], declared: readonly Lane[]): Lane[] {
  const merged = stored.map((l) => ({ ...l }));
  for (const lane of declared) {
    const known = merged.find((l) => l.name === lane.name);
    if (known) known.share = lane.share;
    else merged.push({ ...lane });
  }
  return merged;
}

/** The 1-based lane index of a lane score (0: the default lane). */
export function laneIndexOfScore(score: number): number {
  return Math.floor(score / LANE_SPAN);
}

/** The default lane's share: what the named lanes leave. */
export function defaultShare(lanes: readonly Lane[]): number {
  return Math.max(0, 1 - lanes.reduce((sum, l) => sum + l.share, 0));
}

/**
 * How one admission step of `n` places is shared (lua/includes/laneAdmission.lua laneQuotas):
 * each named lane is owed n · share plus its carry and gets the whole part (at most its
 * length), keeping the fraction (below 1) as its carry; a lane with fewer members takes
 * them all and carries nothing; the default lane takes the rest, and what it cannot use
 * goes to the named lanes in index order.
 */
export function laneQuotas(
  n: number,
  lanes: readonly Lane[],
  lengths: readonly number[],
  defaultLength: number,
  carries: readonly number[],
): { quotas: number[]; defaultQuota: number; carries: number[] } {
  const quotas: number[] = [];
  const next: number[] = [];
  let given = 0;
  lanes.forEach((lane, i) => {
    const want = n * lane.share + (carries[i] ?? 0);
    const whole = Math.min(Math.floor(want + 1e-9), n - given);
    if (lengths[i]! >= whole) {
      quotas[i] = whole;
      next[i] = Math.min(1, Math.max(0, want - whole));
    } else {
      quotas[i] = lengths[i]!;
      next[i] = 0;
    }
    given += quotas[i];
  });
  const defaultQuota = Math.min(n - given, defaultLength);
  let rest = n - given - defaultQuota;
  lanes.forEach((_, i) => {
    const extra = Math.min(rest, lengths[i]! - quotas[i]!);
    quotas[i]! += extra;
    rest -= extra;
  });
  return { quotas, defaultQuota, carries: next };
}

/** stats().lanes: the default lane (the waiting the named lanes leave), then each named lane. */
export function laneStats(lanes: readonly Lane[], waiting: number, laneWaiting: readonly number[], usesLeft: readonly number[]): LaneStats[] {
  const named = lanes.map((l, i) => ({ name: l.name, share: l.share, waiting: laneWaiting[i] ?? 0, codeUsesLeft: usesLeft[i] ?? 0 }));
  const inLanes = named.reduce((sum, l) => sum + l.waiting, 0);
  return [{ name: DEFAULT_LANE, share: defaultShare(lanes), waiting: waiting - inLanes, codeUsesLeft: null }, ...named];
}

/**
 * The share of the admission rate a waiting member's lane gets (1 without lanes): a
 * named lane's share, or the default lane's. Nominal: a lane gets more while the others
 * leave theirs unused, so the estimate errs long, never short.
 */
export function laneShare(lanes: readonly Lane[] | undefined, score: number | null | undefined): number {
  if (!lanes || lanes.length === 0 || score === null || score === undefined) return 1;
  const index = laneIndexOfScore(score);
  return index >= 1 ? (lanes[index - 1]?.share ?? 1) : defaultShare(lanes);
}
