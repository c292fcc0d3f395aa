// The framework-neutral HTTP answer every adapter writes, and the answer of a Position: shared by
// core.ts and the gate (gate.ts, shadow.ts), which answer positions of their own.

import type { EntryPassKeys } from '../pass/verify.js';
import type { Position } from '../types.js';
import { NO_STORE, type ErrorBody } from './error-response.js';

/** An HTTP answer, independent of any framework. */
export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  /** A Position, an error body, a JSON Web Key Set, or undefined (204). */
  body?: Position | ErrorBody | EntryPassKeys;
}

/** 200 with the position; Retry-After while WAITING so clients poll at the hinted pace. */
export function positionResult(position: Position): HttpResult {
  const headers: Record<string, string> = { ...NO_STORE };
  if (position.status === 'WAITING') headers['retry-after'] = String(Math.max(1, Math.ceil(position.pollingIntervalSeconds)));
  return { status: 200, headers, body: position };
}
