// The options of `WaitingQueue.release(claim, options)`: whether the order path failed (SPEC §14).

import { z } from 'zod';
import { parseStrict } from './options.js';

/** The second argument of `release`. */
export interface ReleaseOptions {
  /**
   * Whether the order path failed, so that adaptive admission counts a failed order:
   * `true` (the default: a release after a rollback, as before) for a thrown handler, a
   * 5xx, a dropped connection; `false` for an answer the app gave on purpose (a 4xx:
   * validation, out of stock, payment declined), which is then not counted at all. One
   * token counts at most one failure per order window (2 s), however often it is
   * claimed and released.
   */
  failed?: boolean;
}

const schema = z.strictObject({ failed: z.boolean().optional() });

/** Validates release options. @throws {@link WaitgateConfigError} for an unknown or bad one. */
export function parseReleaseOptions(options: ReleaseOptions | undefined): { failed: boolean } {
  if (options === undefined) return { failed: true };
  return { failed: parseStrict(schema, options).failed ?? true };
}
