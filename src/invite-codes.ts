// queue.addCodes and the code of an enter (SPEC §17): validated here, before any store call.

import { z } from 'zod';
import { CodeInvalidError, WaitgateConfigError } from './errors.js';
import { CODE, MAX_CODES_PER_CALL } from './lanes.js';
import { parseStrict } from './options.js';
import type { ControlsHost } from './queue-controls.js';
import { storeThat } from './store-capability.js';

/** Options of `queue.addCodes`. */
export interface AddCodesOptions {
  /** How many entries each code gives (1-1,000,000). Default 1. */
  uses?: number;
}

const addCodesSchema = z.strictObject({
  codes: z.array(z.string().regex(CODE, 'every code must be 1-64 characters of A-Z a-z 0-9 . _ -')).min(1),
  uses: z.number().int().min(1).max(1_000_000).default(1),
});

/**
 * Stores `codes` for `lane` (one of the queue's `lanes` option), in calls of at most
 * MAX_CODES_PER_CALL, each atomic. Resolves with how many codes were added (a code already
 * stored is kept as it is). Throws WaitgateConfigError before any store call for a lane not
 * declared, a bad code or a bad `uses`.
 */
export async function addCodes(host: ControlsHost, lane: string, codes: readonly string[], options: AddCodesOptions = {}): Promise<number> {
  const { lanes } = host.config;
  if (!lanes.some((l) => l.name === lane)) throw new WaitgateConfigError('lane', `"${lane}" is not one of the queue's lanes option`);
  const parsed = parseStrict(addCodesSchema, { codes: [...codes], ...options });
  const store = storeThat(host.config.store, ['addCodes'], 'keep invite codes');
  let added = 0;
  for (let first = 0; first < parsed.codes.length; first += MAX_CODES_PER_CALL) {
    const request = { lanes, lane, uses: parsed.uses, codes: parsed.codes.slice(first, first + MAX_CODES_PER_CALL) };
    added += await host.calls.call('addCodes', () => store.addCodes(host.name, request));
  }
  return added;
}

/** The code of an enter, checked before any store call: a code that cannot be stored is CODE_INVALID at once. */
export function enterCode(options: { code?: string | null } | undefined): string | undefined {
  const code = options?.code;
  if (code === undefined || code === null) return undefined;
  if (typeof code !== 'string' || !CODE.test(code)) throw new CodeInvalidError();
  return code;
}
