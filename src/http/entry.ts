// The claimed entry a guard hands to the order handler: consume once after commit, or release.

import { StoreUnavailableError, isWaitgateError } from '../errors.js';
import type { Claim } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';

/** What the guard puts on the request (`req.entry`, `request.entry`, `ctx.state.entry`). */
export interface Entry {
  /** The member, canonical string form. */
  readonly memberId: string;
  /** Stable, non-secret id of the token: store it in the order row under a UNIQUE constraint. */
  readonly tokenId: string;
  /** The underlying claim. */
  readonly claim: Claim;
  /**
   * After the order committed: uses the token for good. Never rejects. Resolves
   * true when confirmed; false when another claim took the token over, it
   * expired, or the store could not be reached (then the consume is retried in
   * the background and a final failure is reported through the queue's `error` event).
   * The first of consume/release wins; later calls answer the first outcome.
   */
  consume(): Promise<boolean>;
  /** After the order rolled back: gives the token back (same contract as consume). */
  release(): Promise<boolean>;
}

/** Delays between background retries of a settle that met a store failure. */
export const SETTLE_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000];

/** Creates the entry of one claim. */
export function createEntry(queue: WaitingQueue, claim: Claim, retryDelaysMs: readonly number[] = SETTLE_RETRY_DELAYS_MS): Entry {
  let settled: { kind: 'consume' | 'release'; outcome: Promise<boolean> } | null = null;

  const settle = (kind: 'consume' | 'release'): Promise<boolean> => {
    if (settled) return settled.kind === kind ? settled.outcome : Promise.resolve(false);
    const run = () => (kind === 'consume' ? queue.consume(claim) : queue.release(claim));
    const outcome = run().catch((error: unknown) => {
      if (isWaitgateError(error) && error.code === 'STORE_UNAVAILABLE') retryInBackground(queue, kind, run, retryDelaysMs);
      else queue.reportError(error instanceof Error ? error : new Error(String(error)));
      return false;
    });
    settled = { kind, outcome };
    return outcome;
  };

  return {
    memberId: claim.memberId,
    tokenId: claim.tokenId,
    claim,
    consume: () => settle('consume'),
    release: () => settle('release'),
  };
}

/** Bounded retries with backoff; safe because consume and release are idempotent by claim id. */
function retryInBackground(queue: WaitingQueue, kind: string, run: () => Promise<boolean>, delays: readonly number[]): void {
  let attempt = 0;
  const next = () => {
    if (attempt >= delays.length) {
      queue.reportError(new StoreUnavailableError(`waitgate could not ${kind} a claim after ${delays.length} retries; the token's TTL and the order table's UNIQUE tokenId remain the safety net.`));
      return;
    }
    const timer = setTimeout(() => {
      run().then(
        () => undefined,
        () => next(),
      );
    }, delays[attempt++]);
    timer.unref?.();
  };
  next();
}
