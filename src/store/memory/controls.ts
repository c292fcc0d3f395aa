// Runtime controls (mirrors lua/setControls-3.lua and lua/controls-1.lua): a patch
// applied with what only the store can judge (the pre-queue, a committed draw).

import { WaitgateConfigError } from '../../errors.js';
import type { ControlsRequest, StoredControls } from '../store.js';
import { beforeOpening, type Controls, type QueueState } from './state.js';
import { closeSoldOut } from './stock.js';
import { checkKeptLimits, keptLimits, logChange } from './controls-log.js';

/** lua/includes/controls.lua DRAW_RANGE: 2^40. */
const DRAW_RANGE = 2 ** 40;

export function setControls(q: QueueState, now: number, request: ControlsRequest): { version: number } {
  const current = q.controls;
  const p = request.patch;
  checkKeptLimits(q, p, request.limits);
  const next: Controls = { ...current };
  if (p.mode !== undefined) next.mode = p.mode;
  if (p.message !== undefined) next.message = p.message ?? undefined;
  if (p.admitRatePerSecond !== undefined) next.rate = p.admitRatePerSecond ?? undefined;
  if (p.admitBurst !== undefined) next.burst = p.admitBurst;
  if (p.maxActive !== undefined) next.maxActive = p.maxActive;
  if (p.opensAt !== undefined) next.opensAt = p.opensAt ?? undefined;
  if (p.shuffle !== undefined) next.shuffle = p.shuffle;
  if (p.stock !== undefined) next.stock = p.stock ?? undefined;
  if (p.soldOutMessage !== undefined) next.soldOutMessage = p.soldOutMessage ?? undefined;
  if (p.safetyNet !== undefined) next.safetyNet = p.safetyNet;

  // A patch that changes nothing is answered as applied (a re-sent call), writing nothing.
  const fields = ['mode', 'message', 'rate', 'burst', 'maxActive', 'opensAt', 'shuffle', 'stock', 'soldOutMessage', 'safetyNet'] as const;
  if (fields.every((f) => next[f] === current[f])) return { version: current.version };
  // What only the store can judge (mirrors lua/setControls-3.lua).
  const pendingBefore = beforeOpening(current, now);
  const pendingAfter = beforeOpening(next, now);
  // Removing the opening only opens the queue: no new draw (schedule --cancel after it passed).
  const startsDraw = (p.shuffle !== undefined || (p.opensAt !== undefined && p.opensAt !== null)) && next.shuffle === true && !(pendingBefore && current.shuffle === true);
  if (startsDraw && !pendingAfter) {
    if (next.opensAt !== undefined) throw new WaitgateConfigError('opensAt', 'is in the past: a shuffled pre-queue needs an opening in the future');
    throw new WaitgateConfigError('shuffle', 'needs opensAt in the future (the pre-queue is drawn at opensAt)');
  }
  if (pendingBefore && (current.shuffle === true) !== (next.shuffle === true) && current.preQueueFrom !== undefined && current.scoreBase !== undefined) {
    const preQueued = q.waiting.countBelow(current.scoreBase) - q.waiting.countBelow(current.preQueueFrom);
    if (preQueued > 0) throw new WaitgateConfigError('shuffle', `cannot change once the pre-queue has members (${preQueued} waiting for the opening)`);
  }
  // A committed draw is final: while members drawn with its seed wait, a new draw keeps it.
  const drawnWaiting =
    current.seed !== undefined && current.preQueueFrom !== undefined && current.scoreBase !== undefined
      ? q.waiting.countBelow(current.scoreBase) - q.waiting.countBelow(current.preQueueFrom)
      : 0;
  if (pendingAfter && !pendingBefore) {
    next.preQueueFrom = (current.scoreBase ?? 0) + q.seq + 1;
    next.scoreBase = next.preQueueFrom + DRAW_RANGE;
  }
  if (startsDraw && drawnWaiting > 0) {
    next.seed = current.seed;
    next.commitment = current.commitment;
  } else if (startsDraw) {
    next.seed = request.seed;
    next.commitment = request.commitment;
    q.cohort = undefined; // a new seed: the cohort of this draw starts empty (lua/includes/cohort.lua restartCohort)
  } else if (next.shuffle !== true && pendingBefore && current.shuffle === true) {
    next.seed = undefined;
    next.commitment = undefined;
  }
  next.version = current.version + 1;
  // New stock: the tokens in play are counted again at the next admission step; none left closes the queue.
  if (next.stock !== current.stock) {
    next.stockAvailable = undefined;
    if (next.stock === 0) Object.assign(next, { mode: 'closed', message: closeSoldOut(next).message });
  }
  q.controls = next;
  const drawCommitment = next.commitment !== current.commitment ? next.commitment : undefined;
  logChange(q, { at: now, actor: request.actor ?? null, patch: structuredClone(p), version: next.version, ...(drawCommitment ? { drawCommitment } : {}) });
  return { version: next.version };
}

export function storedControls(q: QueueState, now: number): StoredControls {
  const c = q.controls;
  return {
    now,
    mode: c.mode ?? null,
    message: c.message ?? null,
    admitRatePerSecond: c.rate ?? null,
    admitBurst: c.burst ?? null,
    maxActive: c.maxActive,
    opensAt: c.opensAt ?? null,
    shuffle: c.shuffle === true,
    drawSeed: c.seed ?? null,
    drawCommitment: c.commitment ?? null,
    cohortHead: q.cohort?.head ?? null,
    cohortLength: q.cohort?.hashes.length ?? 0,
    stock: c.stock ?? null,
    soldOutMessage: c.soldOutMessage ?? null,
    safetyNet: c.safetyNet ?? null,
    limits: keptLimits(q),
    version: c.version,
    adaptiveRate: q.adaptive?.rate ?? null,
  };
}
