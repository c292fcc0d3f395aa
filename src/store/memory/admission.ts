// One admission step (mirrors lua/popAndIssue-9.lua): reap lapsed tokens, refill the
// bucket, take live members from the head, issue their tokens, record the figures.

import { recordAdmissionStep } from '../../admission-window.js';
import { EVALUATE_EVERY_MS, nextRate } from '../../admission-control.js';
import { recordWaits } from '../../queue-figures.js';
import { MIN_PACE_EVIDENCE, defaultBurst, nextPace, presenceHead, stepOffer } from '../../rates.js';
import type { AdmitRequest, AdmitResult } from '../store.js';
import { refillBucket } from './bucket.js';
import { beforeOpening, deadlineOf, type QueueState } from './state.js';
import { takeFromHead, takeByShares, type TakeRules } from './take.js';

/** lua/popAndIssue-9.lua PASSTHROUGH_BATCH and MAX_DROPS. */
const PASSTHROUGH_BATCH = 2000;
const MAX_DROPS = 1000;

/** How long an admit id is remembered (as the Lua script does). */
const ADMIT_ID_MEMORY_MS = 300_000;

export function admit(q: QueueState, now: number, request: AdmitRequest): AdmitResult {
  const expiresAt = now + request.tokenTtlMs;
  // A lease that lapsed is an order that neither committed nor rolled back in time: a
  // failure, counted once (mirrors reaping the `leases` key), whether its token lives on.
  let lapsed = 0;
  for (const [member, record] of q.tokens) {
    if (record.claimId !== null && record.claimExp > 0 && record.claimExp <= now && !record.leaseCounted) {
      record.leaseCounted = true;
      lapsed++;
    }
    if (deadlineOf(record) > now) continue;
    q.tokens.delete(member);
    q.totals.expired++;
  }
  if (lapsed > 0) q.orders.record(now, { count: lapsed, failed: lapsed, latency: 0, samples: 0 });
  const active = q.tokens.size;
  for (const [id, forgetAt] of q.recentAdmits) if (forgetAt <= now) q.recentAdmits.delete(id);
  if (q.recentAdmits.has(request.admitId)) return { expiresAt, active, admitted: [], admittable: 0, abandoned: [], held: 0 };
  // The controls override the caller's options where set.
  const c = q.controls;
  const rate = c.rate ?? adaptiveRate(q, now, request);
  const burst = c.burst ?? (request.burstFollowsRate ? defaultBurst(rate) : request.burst);
  const maxActive = c.maxActive === undefined ? request.maxActive : c.maxActive;
  const { bucket, full } = refillBucket(q.bucket, now, rate, burst);
  const whole = Math.min(Math.floor(bucket.tokens + 1e-9), burst);
  const laneLengths = q.lanes?.lines.map((line) => line.size) ?? [];
  const waitingBefore = laneLengths.reduce((sum, length) => sum + length, q.waiting.size);
  let admittable = Math.min(Math.floor(bucket.tokens + 1e-9), burst, waitingBefore);
  if (maxActive !== null) admittable = Math.min(admittable, maxActive - active);
  const passthrough = c.mode === 'passthrough';
  if (passthrough) admittable = Math.min(waitingBefore, PASSTHROUGH_BATCH);
  // Stock: in every mode, the tokens in play never exceed the stock left.
  const stockLeft = c.stock;
  if (stockLeft !== undefined) admittable = Math.min(admittable, stockLeft - active);
  if (c.mode === 'paused' || c.mode === 'closed' || beforeOpening(c, now)) admittable = 0;
  admittable = Math.max(0, admittable);
  const n = Math.min(admittable, request.tokens.length);
  const standing = c.mode === 'paused' || c.mode === 'closed' || beforeOpening(c, now);

  // Take members from the head until n live members are found; the dead are dropped at
  // no admission cost, the silent for holdSilentAfterMs (not yet abandonAfterMs) are
  // held: left in place (mirrors lua/popAndIssue-9.lua).
  const abandonAfter = request.abandonAfterMs ?? null;
  const tracking = abandonAfter !== null && !passthrough;
  const holdSilent = tracking && (request.holdSilentAfterMs ?? -1) >= 0 ? request.holdSilentAfterMs! : null;
  // The drop bucket: one second's worth of drops, refilled at the pace that carries the
  // line across the presence head (computed from the rate and burst in force) in the horizon.
  const horizon = request.dropHorizonMs ?? null;
  const dropRate = tracking && horizon !== null ? (presenceHead(rate, burst, abandonAfter) * 1000) / horizon : null;
  let dropBudget = MAX_DROPS;
  if (tracking && dropRate !== null) {
    const capacity = Math.max(1, dropRate);
    const drops = (q.dropBucket = refillBucket(q.dropBucket, now, dropRate, capacity).bucket);
    dropBudget = Math.min(MAX_DROPS, Math.floor(drops.tokens + 1e-9));
  }
  const rules: TakeRules = { now, abandonAfter: tracking ? abandonAfter : null, holdSilent, dropBudget, seen: q.seen };
  // With lanes, the places are shared by the lanes' shares (mirrors lua/includes/laneAdmission.lua).
  const { live, liveScores, abandoned, held } = q.lanes
    ? takeByShares(q.waiting, q.lanes, n, laneLengths, c.scoreBase ?? 0, rules)
    : takeFromHead(q.waiting, n, rules);
  if (q.dropBucket && tracking && dropRate !== null) q.dropBucket.tokens -= abandoned.length;
  const pickupBy = request.pickupTimeoutMs === undefined || request.pickupTimeoutMs === null ? 0 : Math.min(now + request.pickupTimeoutMs, expiresAt);
  const admitted = live.map((memberId, i) => {
    const entryToken = request.tokens[i]!;
    q.tokens.set(memberId, { token: entryToken, tokenExp: expiresAt, claimId: null, claimExp: 0, pickupBy });
    const from = waitingSince(q, liveScores[i]!);
    return { memberId, entryToken, waitedMs: from === null ? null : Math.max(0, now - from) };
  });
  q.totals.admitted += admitted.length;
  recordWaits(
    q.waitSlots,
    now,
    admitted.flatMap((a) => (a.waitedMs === null ? [] : [a.waitedMs])),
  );
  if (admitted.length > 0 || abandoned.length > 0) q.entries.trim(q.waiting.head() === null ? null : q.waiting.seqOf(q.waiting.head()!));
  if (!passthrough) bucket.tokens -= admitted.length;
  q.bucket = bucket;
  if (stockLeft !== undefined) q.controls = { ...q.controls, stockAvailable: Math.max(0, stockLeft - active - admitted.length) };
  q.totals.abandoned += abandoned.length;
  q.window = recordAdmissionStep(q.window, admitted.length, waitingBefore, now, request.windowMs, abandoned.length);
  // The pace of the line (mirrors lua/popAndIssue-9.lua): every step decays it; a step
  // that left members waiting adds its moves and the tokens the rate offered since the step before.
  const moved = admitted.length + abandoned.length;
  const counted = q.pace !== null && !passthrough && !standing && waitingBefore > moved;
  q.pace = nextPace(q.pace, now, counted ? moved : 0, counted ? stepOffer(admitted.length, whole, full, rate, q.pace!.at, now) : 0);
  q.window = { ...q.window, pace: q.pace.offered >= MIN_PACE_EVIDENCE ? q.pace.factor : null };
  q.recentAdmits.set(request.admitId, now + ADMIT_ID_MEMORY_MS);
  if (admitted.length + abandoned.length > 0) {
    const headMoves = (q.headMoves += admitted.length + abandoned.length);
    // After this call returns, as a push from Redis arrives after the step.
    for (const listener of q.headMoveListeners) queueMicrotask(() => listener(headMoves));
  }
  return { expiresAt, active: active + admitted.length, admitted, admittable, abandoned, held };
}

/** Adaptive admission's rate in force, evaluated at most once a second (mirrors lua/popAndIssue-9.lua). */
function adaptiveRate(q: QueueState, now: number, request: AdmitRequest): number {
  const limits = request.adaptive;
  if (!limits) return request.ratePerSecond;
  let state = q.adaptive;
  const inForce = state?.rate ?? Math.min(limits.maxRatePerSecond, Math.max(limits.minRatePerSecond, request.ratePerSecond));
  if (!state || now - state.evaluatedAt >= EVALUATE_EVERY_MS || now < state.evaluatedAt) {
    state = q.adaptive = { rate: nextRate(inForce, q.orders.read(now), limits), evaluatedAt: now };
  }
  return state.rate;
}

/** When the member with this entry score began to wait: the opening for a pre-queue place, else its entry checkpoint. */
function waitingSince(q: QueueState, score: number): number | null {
  const c = q.controls;
  if (c.preQueueFrom !== undefined && c.scoreBase !== undefined && score >= c.preQueueFrom && score < c.scoreBase) return c.opensAt ?? null;
  return q.entries.entryTime(score);
}
