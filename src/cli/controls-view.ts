// The controls as the command shows them: what is in force where it is stored, and, for
// the fields never set through setControls, "the instances' option" (each app instance's
// constructor option, which the command cannot see), never a made-up value.

import { controlsInForce, type QueueControls } from '../controls.js';
import type { StoredControls } from '../store/store.js';

/** A control that falls back to each app instance's own option until it is set. */
export type InstanceOption = 'admitRatePerSecond' | 'admitBurst' | 'maxActive' | 'safetyNet';

/** The controls as printed by `--json`: `QueueControls`, with unset instance options null and listed in `unset`. */
export interface ControlsJson extends Omit<QueueControls, InstanceOption> {
  /** null when never set (listed in `unset`). */
  admitRatePerSecond: number | null;
  /** null when never set (listed in `unset`). */
  admitBurst: number | null;
  /** null: no cap, or never set (then listed in `unset`). */
  maxActive: number | null;
  /** null when never set (listed in `unset`). */
  safetyNet: boolean | null;
  /** Fields never set through setControls: each app instance uses its own constructor option. */
  unset: InstanceOption[];
}

// Placeholders for the instance options: every field they would fill is replaced below.
const UNKNOWN = { admitRatePerSecond: 1, admitBurst: 1, maxActive: null };

/** The view of stored controls; the library's own rule decides the rest (e.g. the seed stays hidden until the opening). */
export function controlsView(stored: StoredControls): ControlsJson {
  const inForce = controlsInForce(stored, UNKNOWN);
  const unset: InstanceOption[] = [];
  // A rate pinned through the controls, else the one adaptive admission set: either is shared.
  const rate = stored.admitRatePerSecond ?? stored.adaptiveRate ?? null;
  if (rate === null) unset.push('admitRatePerSecond');
  if (stored.admitBurst === null) unset.push('admitBurst');
  if (stored.maxActive === undefined) unset.push('maxActive');
  if ((stored.safetyNet ?? null) === null) unset.push('safetyNet');
  return {
    mode: inForce.mode,
    message: inForce.message,
    admitRatePerSecond: rate,
    admitBurst: stored.admitBurst,
    maxActive: stored.maxActive ?? null,
    opensAt: inForce.opensAt,
    shuffle: inForce.shuffle,
    drawCommitment: inForce.drawCommitment,
    drawSeed: inForce.drawSeed,
    cohortCommitment: inForce.cohortCommitment,
    stock: inForce.stock,
    soldOutMessage: inForce.soldOutMessage,
    safetyNet: stored.safetyNet ?? null,
    version: inForce.version,
    unset,
  };
}
