// Bounds every store call: an answer within the timeout, or StoreUnavailableError. Never a hang.

import { StoreUnavailableError, isWaitgateError } from '../errors.js';

/**
 * Runs one store operation, bounded by `timeoutMs`. A store error that is not a
 * waitgate error (connection refused, Redis error reply, ...) becomes
 * {@link StoreUnavailableError} with the original as `cause`.
 */
export function withTimeout<T>(operation: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  // One promise and one timer per call, no Promise.race: this wraps every store call,
  // including each poll, so its cost is paid on the hottest path.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreUnavailableError(`The store did not answer ${operation} within ${timeoutMs} ms; the outcome is unknown and retrying is safe.`)),
      timeoutMs,
    );
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      clearTimeout(timer);
      reject(toStoreError(operation, error));
      return;
    }
    // A call that settles after the timeout lands here too: reject() is then a no-op,
    // and its late rejection is handled rather than left unhandled.
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(toStoreError(operation, error));
      },
    );
  });
}

function toStoreError(operation: string, error: unknown): Error {
  if (isWaitgateError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`The store failed on ${operation}: ${reason}`, { cause: error });
}
