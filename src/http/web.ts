// The neutral core on Web-standard Request/Response: shared by waitgate/fetch and waitgate/hono
// (internal: neither re-exports more than its types).

import type { WaitingQueue } from '../waiting-queue.js';
import { runGuard, type Entry, type HttpResult, type RequireEntryTokenOptions, type ResolvedGuardOptions } from './core.js';

/** What the guard does when the store cannot be reached: its `onStoreUnavailable` option. */
export type StoreUnavailableMode = 'fail-closed' | 'fail-open';

/**
 * The entry a guarded handler receives: always an {@link Entry}, unless the guard may let a
 * request through without one (`onStoreUnavailable: 'fail-open'`).
 */
export type EntryFor<Mode extends StoreUnavailableMode> = 'fail-open' extends Mode ? Entry | undefined : Entry;

/** Guard options of the Web adapters: `onStoreUnavailable` is kept literal, so it can type the entry. */
export interface WebRequireEntryTokenOptions<Req, Mode extends StoreUnavailableMode = 'fail-closed'> extends Omit<
  RequireEntryTokenOptions<Req>,
  'onStoreUnavailable'
> {
  /**
   * `fail-closed` (default): answer 503 with Retry-After; the handler is never reached.
   * `fail-open`: let the request through WITHOUT an entry (typed `Entry | undefined` then).
   */
  onStoreUnavailable?: Mode;
}

/** An {@link HttpResult} as a Web Response (JSON body, or none for 204). */
export function toResponse(result: HttpResult): Response {
  if (result.body === undefined) return new Response(null, { status: result.status, headers: result.headers });
  return new Response(JSON.stringify(result.body), { status: result.status, headers: { 'content-type': 'application/json', ...result.headers } });
}

/**
 * Claims the token of one order request and runs `run` with its entry, or answers the
 * refusal itself (401/409/503) without running it.
 *
 * With `settle: 'auto'` the response's end settles the claim (see {@link settleWhenFinished}); a
 * `run` that throws releases it. `failed()` is asked once `run` resolved, for frameworks that turn
 * a thrown handler into a response (Hono's `onError`): true releases whatever the status.
 */
export async function guardRequest<Req>(
  queue: WaitingQueue,
  config: ResolvedGuardOptions<Req>,
  member: unknown,
  request: Request,
  run: (entry: Entry | undefined) => Promise<Response>,
  failed: () => boolean = () => false,
): Promise<Response> {
  const outcome = await runGuard(queue, config, member, request.headers.get(config.tokenHeader) ?? undefined);
  if (outcome.kind === 'respond') return toResponse(outcome.result);
  if (outcome.kind === 'open') return run(undefined);
  if (config.settle === 'manual') return run(outcome.entry);
  const settle = settleOnce(outcome.entry, request.signal);
  let response: Response;
  try {
    response = await run(outcome.entry);
  } catch (error) {
    settle(false);
    throw error;
  }
  return settleWhenFinished(response, !failed() && response.ok, settle);
}

/**
 * Settles an entry once: consume (`sent` true) or release. A request whose signal aborts first
 * (the client hung up: Node adapters, Bun, Deno and Next.js abort it) releases, like a closed
 * connection in the Node adapters.
 */
function settleOnce(entry: Entry, signal: AbortSignal): (sent: boolean) => void {
  let done = false;
  const settle = (sent: boolean) => {
    if (done) return;
    done = true;
    signal.removeEventListener('abort', onAbort);
    void (sent ? entry.consume() : entry.release());
  };
  const onAbort = () => settle(false);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return settle;
}

/**
 * Auto settle on the Web: what "finished" means.
 *
 * A handler's Response is finished when its body has been read to the end: the runtime
 * (Node adapter, Bun, Deno, Next.js) reads it to write it to the socket, so the last read is
 * the Web counterpart of Node's `finish` event. Then a 2xx consumes the claim. A body cancelled
 * before its end (the client hung up mid-stream) releases it, as `close` before `finish` does in
 * the Node adapters. A response without a body (204) has nothing left to send but its head, which
 * no runtime reports, so it settles at once. A non-2xx releases at once, without waiting.
 *
 * A Response nobody reads nor cancels (a framework that drops it) never settles: the claim's
 * lease (`claimTtlSeconds`) then lapses and the token is usable again.
 */
function settleWhenFinished(response: Response, ok: boolean, settle: (sent: boolean) => void): Response {
  if (!ok || response.body === null) {
    settle(ok);
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          controller.close();
          settle(true);
        } catch (error) {
          settle(false);
          controller.error(error);
        }
      },
      async cancel(reason) {
        settle(false);
        await reader.cancel(reason);
      },
    },
    // No read-ahead: a pull happens only when the runtime asks, so the end really is the last read.
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
