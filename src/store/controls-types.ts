// The controls as a store keeps and shows them, and one setControls step's request
// (re-exported by store.ts, the Store interface).

import type { ControlLimits, ControlsPatch, QueueMode } from '../types.js';

/**
 * The controls a position shows, as the store read them with it. Optional in
 * snapshots, for custom stores without controls (then: open, no message).
 */
export interface ControlsView {
  mode: QueueMode;
  message: string | null;
  /** Epoch ms; null when no opening is scheduled. */
  opensAt: number | null;
  shuffle: boolean;
  /** The first entry score of the pre-queue (a member scored from it on entered before opensAt); null without one. */
  preQueueFrom: number | null;
  /** The rate set through the controls; null when unset (the instance's option applies). */
  admitRatePerSecond: number | null;
  /** The burst set through the controls; null when unset. Optional for custom stores. */
  admitBurst?: number | null;
  /** The rate adaptive admission set last; null before (or when fixed). Optional for custom stores. */
  adaptiveRate?: number | null;
  /** Units of stock left; null (or absent, for custom stores) without stock. */
  stockLeft?: number | null;
  /** Stock left minus the tokens in play at the last admission step or consume: the ranks below it are likely served. */
  stockAvailable?: number | null;
  /** The safety net as set through the controls; null (or absent, for custom stores) when unset: the instance's option applies. */
  safetyNet?: boolean | null;
}

/** The controls as stored: null where a field was never set (maxActive: undefined never set, null no cap). */
export interface StoredControls {
  mode: QueueMode | null;
  message: string | null;
  admitRatePerSecond: number | null;
  admitBurst: number | null;
  maxActive: number | null | undefined;
  opensAt: number | null;
  shuffle: boolean;
  drawSeed: string | null;
  drawCommitment: string | null;
  /** The cohort chain's head (hex) and length so far; null/0 without one. Optional for custom stores. */
  cohortHead?: string | null;
  cohortLength?: number;
  /** Units of stock left; null without stock. Optional for custom stores. */
  stock?: number | null;
  /** The sold-out message set; null: the default. Optional for custom stores. */
  soldOutMessage?: string | null;
  /** The safety net set through the controls; null when unset (the instances' option applies). Optional for custom stores. */
  safetyNet?: boolean | null;
  /** The limits kept with the controls (a queue with `limits` wrote them); {} for none. Optional for custom stores. */
  limits?: ControlLimits;
  version: number;
  /** The store's clock, epoch ms. */
  now: number;
  /** The rate adaptive admission set last (see {@link AdmitRequest.adaptive}); null before. Optional for custom stores. */
  adaptiveRate?: number | null;
}

/** One `setControls` step: the validated patch, and a fresh seed in case it starts a draw. */
export interface ControlsRequest {
  patch: ControlsPatch;
  /** 64 hex digits; kept by the store only if this call starts a draw. */
  seed: string;
  /** SHA-256 of the seed's bytes, hex. */
  commitment: string;
  /** Who makes the change, recorded in the controls log; absent: null. Optional for custom stores. */
  actor?: string;
  /** The caller's `limits`, kept with the controls for every writer (absent: those kept stay); a patch beyond the limits in force is refused. */
  limits?: ControlLimits;
}
