// The audit trail of the controls (SPEC §18): every change, who made it, and the version it
// made, kept in the store (lua/includes/controlsLog.lua, src/store/memory/controls-log.ts).

import { z } from 'zod';
import { parseStrict } from './options.js';
import type { ControlsLogEntry, SetControlsOptions } from './types.js';

/** The most entries the log keeps: older ones fall off (lua/includes/controlsLog.lua CONTROLS_LOG_CAP). */
export const CONTROLS_LOG_CAP = 1000;

/** The actor of the entry a sale that sold out writes when it closes itself (lua/includes/stock.lua STOCK_ACTOR). */
export const STOCK_ACTOR = 'waitgate:stock';

export type { ControlsLogEntry, SetControlsOptions } from './types.js';

const setOptionsSchema = z.strictObject({ actor: z.string().min(1).max(200).optional() });
const logOptionsSchema = z.strictObject({ limit: z.number().int().min(1).max(CONTROLS_LOG_CAP).default(50) });

/** @throws {@link WaitgateConfigError} for a bad option. */
export function parseSetControlsOptions(options: unknown): SetControlsOptions {
  return parseStrict(setOptionsSchema, options ?? {});
}

/** `{ limit }` of controlsLog: 1..CONTROLS_LOG_CAP, default 50. */
export function parseLogOptions(options: unknown): { limit: number } {
  return parseStrict(logOptionsSchema, options ?? {});
}

/** One entry as stored (JSON text). */
export function decodeLogEntry(text: string): ControlsLogEntry {
  return JSON.parse(text) as ControlsLogEntry;
}
