// From any waitgate error to the HTTP answer it stands for. Used by every adapter,
// exported for hand-written routes (`toHttpResponse`).

import { isWaitgateError, type WaitgateError } from '../errors.js';

/** Body codes of error answers. */
export type HttpErrorCode =
  | 'UNAUTHENTICATED'
  | 'CHALLENGE_REQUIRED'
  | 'IDENTITY_LIMIT'
  | 'INVALID_MEMBER_ID'
  | 'ENTRY_TOKEN_MISSING'
  | 'ENTRY_TOKEN_INVALID'
  | 'ENTRY_TOKEN_IN_USE'
  | 'STORE_UNAVAILABLE'
  | 'TOO_MANY_STREAMS'
  | 'QUEUE_STATE_LOST'
  | 'QUEUE_CLOSED'
  | 'CODE_INVALID'
  | 'CONFIG_INVALID';

/** The body of every error answer. */
export interface ErrorBody {
  error: { code: HttpErrorCode; message: string };
}

/** An error answer, independent of any framework. Header names are lower case. */
export interface HttpErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/** Seconds a client should wait after a 503 STORE_UNAVAILABLE before trying again. */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export const NO_STORE = { 'cache-control': 'no-store' } as const;

/** An error answer with `Cache-Control: no-store` and the given extra headers. */
export function errorResponse(status: number, code: HttpErrorCode, message: string, headers: Record<string, string> = {}): HttpErrorResponse {
  return { status, headers: { ...NO_STORE, ...headers }, body: { error: { code, message } } };
}

/**
 * The HTTP answer for a waitgate error: status (the error's `statusCode`), headers
 * (`Cache-Control: no-store`; `Retry-After` on 503 STORE_UNAVAILABLE and on 409
 * ENTRY_TOKEN_IN_USE) and the JSON body `{ error: { code, message } }`. Null for
 * anything that is not a waitgate error: leave it to your framework. Works across
 * copies of the package (ESM beside CJS): it checks the brand, not `instanceof`.
 *
 * @example
 * ```ts
 * app.get('/stats', async (req, res) => {
 *   try {
 *     res.json(await queue.stats());
 *   } catch (error) {
 *     const answer = toHttpResponse(error);
 *     if (!answer) throw error;
 *     res.status(answer.status).set(answer.headers).json(answer.body);
 *   }
 * });
 * ```
 */
export function toHttpResponse(error: unknown): HttpErrorResponse | null {
  if (!isWaitgateError(error)) return null;
  const e = error as WaitgateError & { retryAfterSeconds?: number | null };
  switch (e.code) {
    case 'INVALID_MEMBER_ID':
      return errorResponse(400, 'INVALID_MEMBER_ID', e.message);
    case 'MISSING':
      return errorResponse(401, 'ENTRY_TOKEN_MISSING', e.message);
    case 'INVALID':
      return errorResponse(401, 'ENTRY_TOKEN_INVALID', e.message);
    case 'IN_USE': {
      const seconds = typeof e.retryAfterSeconds === 'number' ? e.retryAfterSeconds : null;
      return errorResponse(409, 'ENTRY_TOKEN_IN_USE', e.message, seconds === null ? {} : { 'retry-after': String(Math.max(1, seconds)) });
    }
    case 'STORE_UNAVAILABLE':
      return errorResponse(503, 'STORE_UNAVAILABLE', 'The waiting queue is unavailable right now; try again shortly.', {
        'retry-after': String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS),
      });
    case 'QUEUE_STATE_LOST':
      // No Retry-After: retrying will not help until an operator has acted.
      return errorResponse(
        503,
        'QUEUE_STATE_LOST',
        'The waiting queue was reset on the server and is closed until the operator restores it; retrying will not help.',
      );
    case 'QUEUE_CLOSED':
      return errorResponse(403, 'QUEUE_CLOSED', e.message);
    case 'IDENTITY_LIMIT':
      return errorResponse(409, 'IDENTITY_LIMIT', e.message);
    case 'CODE_INVALID':
      return errorResponse(403, 'CODE_INVALID', e.message);
    case 'CONFIG_INVALID':
      // The server's own mistake: the option's name is for its logs, not for the client.
      return errorResponse(500, 'CONFIG_INVALID', 'The waiting queue is misconfigured on the server.');
    default:
      // A code of a newer copy of waitgate: trust its status.
      return errorResponse(e.statusCode >= 400 && e.statusCode <= 599 ? e.statusCode : 500, e.code as HttpErrorCode, e.message);
  }
}
