// The audit trail and the limits kept with the controls (mirrors lua/includes/controlsLog.lua
// and the limits of lua/setControls-3.lua), beside each queue's state.

import { CONTROLS_LOG_CAP, type ControlsLogEntry } from '../../controls-log.js';
import { checkLimits } from '../../controls.js';
import type { ControlLimits, ControlsPatch } from '../../types.js';
import type { QueueState } from './state.js';

interface Kept {
  /** Newest first, at most CONTROLS_LOG_CAP. */
  log: ControlsLogEntry[];
  limits: ControlLimits;
}

const kept = new WeakMap<QueueState, Kept>();

function keptOf(q: QueueState): Kept {
  let k = kept.get(q);
  if (!k) kept.set(q, (k = { log: [], limits: {} }));
  return k;
}

/** Keeps the caller's limits (when sent), then refuses a patch beyond the limits in force. @throws {@link WaitgateConfigError} */
export function checkKeptLimits(q: QueueState, patch: ControlsPatch, limits: ControlLimits | undefined): void {
  const k = keptOf(q);
  if (limits) k.limits = { ...limits };
  checkLimits(patch, k.limits);
}

export function keptLimits(q: QueueState): ControlLimits {
  return { ...keptOf(q).limits };
}

/** Records one change, newest first; the oldest fall off past the cap. */
export function logChange(q: QueueState, entry: ControlsLogEntry): void {
  const { log } = keptOf(q);
  log.unshift(entry);
  if (log.length > CONTROLS_LOG_CAP) log.length = CONTROLS_LOG_CAP;
}

export function controlsLog(q: QueueState, limit: number): ControlsLogEntry[] {
  return keptOf(q).log.slice(0, Math.min(limit, CONTROLS_LOG_CAP)).map((e) => structuredClone(e));
}
