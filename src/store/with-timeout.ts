// Bounds every store call: an answer within the timeout, or StoreUnavailableError. Never a hang.

import { StoreUnavailableError, isWaitgateError } from '../errors.js';

/**
 * Runs one store operation, bounded by `timeoutMs`. A store error that is not a
 * waitgate error (connection refused, Redis error reply, ...) becomes
 * {@link StoreUnavailableError} with the original as `cause`.
 */
export async function withTimeout<T>(operation: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`The store did not answer ${operation} within ${timeoutMs} ms; the outcome is unknown and retrying is safe.`)),
      timeoutMs,
    );
  });
  let pending: Promise<T>;
  try {
    pending = run();
  } catch (error) {
    clearTimeout(timer);
    throw toStoreError(operation, error);
  }
  // The call may still settle after the timeout; its late rejection must not go unhandled.
  pending.catch(() => undefined);
  try {
    return await Promise.race([pending, timeout]);
  } catch (error) {
    throw toStoreError(operation, error);
  } finally {
    clearTimeout(timer);
  }
}

function toStoreError(operation: string, error: unknown): Error {
  if (isWaitgateError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`The store failed on ${operation}: ${reason}`, { cause: error });
}
