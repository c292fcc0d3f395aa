// The claimed entry a guard hands to the order handler: consume once after commit, or release.

import { StoreUnavailableError, isWaitgateError } from '../errors.js';
import { parseReleaseOptions, type ReleaseOptions } from '../release-options.js';
import type { Claim } from '../types.js';
import { REPORT_ERROR, type WaitingQueue } from '../waiting-queue.js';

/**
 * The final outcome of settling an entry: `confirmed` (the store applied it),
 * `refused` (the store answered no: the lease lapsed and another claim took the
 * token, it expired, or the other of consume/release came first) or `unknown`
 * (the store could not be reached through every background retry, or the queue's
 * state was lost; reported through the queue's `error` event).
 */
export type SettleOutcome = 'confirmed' | 'refused' | 'unknown';

/**
 * Where settling stands: `unsettled` until `consume()` or `release()` is called,
 * `settling` while the store call runs, `retrying` after it met a store failure
 * (retried in the background), then the {@link SettleOutcome}.
 */
export type SettleState = 'unsettled' | 'settling' | 'retrying' | SettleOutcome;

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
   * true when confirmed, false otherwise: refused by the store, or not known yet
   * because the store could not be reached (then the consume is retried in the
   * background). {@link Entry.state} and {@link Entry.outcome} tell the two apart.
   * The first of consume/release wins; a later call of the other answers false.
   */
  consume(): Promise<boolean>;
  /**
   * After the order rolled back: gives the token back (same contract as consume). With
   * adaptive admission it counts as a failed order unless `{ failed: false }` says the
   * order path did not fail (a 4xx answer: validation, out of stock, payment declined).
   * Rejects only for a bad option ({@link index!WaitgateConfigError}).
   */
  release(options?: ReleaseOptions): Promise<boolean>;
  /** Where settling stands now. */
  readonly state: SettleState;
  /**
   * The final outcome of the first consume/release, after any background retries.
   * Never rejects; pending until consume or release is called.
   */
  outcome(): Promise<SettleOutcome>;
}

/** Delays between background retries of a settle that met a store failure. */
export const SETTLE_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000];

type Action = 'consume' | 'release';

/** Creates the entry of one claim. */
export function createEntry(queue: WaitingQueue, claim: Claim, retryDelaysMs: readonly number[] = SETTLE_RETRY_DELAYS_MS): Entry {
  let first: { action: Action; answer: Promise<boolean> } | null = null;
  let state: SettleState = 'unsettled';
  let resolveOutcome!: (outcome: SettleOutcome) => void;
  const outcome = new Promise<SettleOutcome>((resolve) => (resolveOutcome = resolve));
  const finish = (final: SettleOutcome) => {
    state = final;
    resolveOutcome(final);
  };

  const settle = (action: Action, failed = true): Promise<boolean> => {
    if (first) return first.action === action ? first.answer : Promise.resolve(false);
    state = 'settling';
    const run = () => (action === 'consume' ? queue.consume(claim) : queue.release(claim, { failed }));
    const answer = run().then(
      (applied) => {
        finish(applied ? 'confirmed' : 'refused');
        return applied;
      },
      (error: unknown) => {
        if (isWaitgateError(error) && error.code === 'STORE_UNAVAILABLE') {
          state = 'retrying';
          retryInBackground(queue, action, run, retryDelaysMs, finish);
        } else {
          queue[REPORT_ERROR](error instanceof Error ? error : new Error(String(error)));
          finish('unknown');
        }
        return false;
      },
    );
    first = { action, answer };
    return answer;
  };

  return {
    memberId: claim.memberId,
    tokenId: claim.tokenId,
    claim,
    consume: () => settle('consume'),
    release: (options?: ReleaseOptions) => {
      let failed: boolean;
      try {
        ({ failed } = parseReleaseOptions(options));
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return settle('release', failed);
    },
    get state() {
      return state;
    },
    outcome: () => outcome,
  };
}

/**
 * Bounded retries with backoff; safe because consume and release are idempotent by
 * claim id. Each retry's answer is kept as the outcome. A consume refused after a
 * store failure (the lease lapsed meanwhile and another claim took the token, or it
 * expired) and the final failure are reported through the queue's `error` event.
 */
function retryInBackground(
  queue: WaitingQueue,
  action: Action,
  run: () => Promise<boolean>,
  delays: readonly number[],
  finish: (outcome: SettleOutcome) => void,
): void {
  let attempt = 0;
  const next = () => {
    if (attempt >= delays.length) {
      queue[REPORT_ERROR](
        new StoreUnavailableError(
          `waitgate could not ${action} a claim after ${delays.length} retries; the token's TTL and the order table's UNIQUE tokenId remain the safety net.`,
        ),
      );
      finish('unknown');
      return;
    }
    const timer = setTimeout(() => {
      run().then(
        (applied) => {
          // A refused consume matters (the order committed, the token was not used up). A
          // refused release does not: the first attempt may have landed before its reply was lost.
          if (!applied && action === 'consume') {
            queue[REPORT_ERROR](
              new Error(
                `waitgate: a ${action} retried after a store failure was refused: the claim's lease lapsed and another request took the token over, or the token expired.`,
              ),
            );
          }
          finish(applied ? 'confirmed' : 'refused');
        },
        (error: unknown) => {
          if (isWaitgateError(error) && error.code === 'STORE_UNAVAILABLE') return next();
          queue[REPORT_ERROR](error instanceof Error ? error : new Error(String(error)));
          finish('unknown');
        },
      );
    }, delays[attempt++]);
    timer.unref?.();
  };
  next();
}
