// WaitingQueue's runtime controls, apart from the queue itself: a change (validated,
// checked against the limits, recorded with its actor), the controls in force, the log.

import { controlsInForce, newDrawSeed, checkLimits, parseControlsPatch, type ControlsPatch, type QueueControls } from './controls.js';
import { parseLogOptions, parseSetControlsOptions, type ControlsLogEntry } from './controls-log.js';
import type { QueueConfig } from './options.js';
import { storeThat } from './store-capability.js';
import type { StoreCalls } from './store-calls.js';

/** What the controls need of a queue. */
export interface ControlsHost {
  name: string;
  config: QueueConfig;
  calls: StoreCalls;
}

const CONTROLS = ['setControls', 'controls'] as const;

/** The instance's limits, or undefined when it has none (the stored ones then stand). */
function limitsOf(config: QueueConfig) {
  return Object.keys(config.limits).length > 0 ? config.limits : undefined;
}

/** Applies a patch for every instance; the limits (this instance's and those kept in the store) refuse it first. */
export async function applyControls(host: ControlsHost, patch: ControlsPatch, options?: { actor?: string }): Promise<QueueControls> {
  const valid = checkLimits(parseControlsPatch(patch), host.config.limits);
  const { actor } = parseSetControlsOptions(options);
  const store = storeThat(host.config.store, [...CONTROLS], 'keep runtime controls');
  const { seed, commitment } = newDrawSeed();
  const limits = limitsOf(host.config);
  await host.calls.call('setControls', () => store.setControls(host.name, { patch: valid, seed, commitment, actor, limits }));
  return readControls(host);
}

/** Keeps this instance's limits with the controls, so every writer (the command, a dashboard) is refused beyond them. */
export async function keepLimits(host: ControlsHost): Promise<void> {
  const limits = limitsOf(host.config);
  const store = host.config.store;
  if (!limits || typeof store.setControls !== 'function') return;
  const { seed, commitment } = newDrawSeed();
  await host.calls.call('setControls', () => store.setControls!(host.name, { patch: {}, seed, commitment, limits }));
}

export async function readControls(host: ControlsHost): Promise<QueueControls> {
  const store = storeThat(host.config.store, [...CONTROLS], 'keep runtime controls');
  const stored = await host.calls.call('controls', () => store.controls(host.name));
  return controlsInForce(stored, host.config);
}

/** The last changes of the controls, newest first. */
export async function readControlsLog(host: ControlsHost, options?: { limit?: number }): Promise<ControlsLogEntry[]> {
  const { limit } = parseLogOptions(options);
  const store = storeThat(host.config.store, ['controlsLog'], 'keep a controls log');
  return host.calls.call('controlsLog', () => store.controlsLog(host.name, limit));
}
