// The neutral core on Web-standard Request/Response: shared by waitgate/fetch and waitgate/hono
// (internal: neither re-exports more than its types).

import type { WaitingQueue } from '../waiting-queue.js';
import { MAX_UNREAD_BYTES, type StreamOpening } from './event-stream.js';
import { runGuard, settleEnded, type Entry, type HttpResult, type OrderEnd, type RequireEntryTokenOptions, type ResolvedGuardOptions } from './core.js';
import { requestToken } from './pass-cookie.js';

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

/** A text answer of the waiting page's routes as a Web Response. */
export function toPageResponse(result: { status: number; headers: Record<string, string>; body: string }): Response {
  const empty = result.body === '' || result.status === 303;
  return new Response(empty ? null : result.body, { status: result.status, headers: result.headers });
}

/**
 * The answer of `GET …/events` as a Web Response: a JSON refusal, or the member's stream as the
 * body (each chunk enqueued at once; a cancelled body or an aborted request closes the stream).
 */
export function toEventResponse(opening: StreamOpening, signal: AbortSignal): Response {
  if (opening.kind === 'respond') return toResponse(opening.result);
  const { stream } = opening;
  const encoder = new TextEncoder();
  if (signal.aborted)
    stream.close(); // the client hung up during the first look
  else signal.addEventListener('abort', () => stream.close(), { once: true });
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        stream.attach({
          write: (chunk) => {
            try {
              // A client that reads nothing is cut (it reconnects, or polls) rather than buffered for without end.
              if ((controller.desiredSize ?? 0) < -MAX_UNREAD_BYTES) throw new Error('unread');
              controller.enqueue(encoder.encode(chunk));
            } catch {
              stream.close(); // the body was closed under us, or its client reads nothing
              controller.error(new Error('waitgate: the event stream was closed'));
            }
          },
          end: () => controller.close(),
        });
      },
      cancel: () => stream.close(),
    },
    // Counted in bytes: desiredSize is minus what the client has not read yet.
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
  return new Response(body, { status: 200, headers: opening.headers });
}

/**
 * Claims the token of one order request and runs `run` with its entry, or answers the
 * refusal itself (401/409/503) without running it.
 *
 * With `settle: 'auto'` the response's end settles the claim (see {@link settleWhenFinished}); a
 * `run` that throws releases it. `failed()` is asked once `run` resolved, for frameworks that turn
 * a thrown handler into a response (Hono's `onError`): true releases whatever the status (counted
 * as a failed order unless that response is a 4xx: see `orderFailed` in core.ts).
 */
export async function guardRequest<Req>(
  queue: WaitingQueue,
  config: ResolvedGuardOptions<Req>,
  member: unknown,
  request: Request,
  run: (entry: Entry | undefined) => Promise<Response>,
  failed: () => boolean = () => false,
): Promise<Response> {
  const outcome = await runGuard(queue, config, member, requestToken(request, config.tokenHeader));
  if (outcome.kind === 'respond') return toResponse(outcome.result);
  if (outcome.kind === 'open') return run(undefined);
  if (config.settle === 'manual') return run(outcome.entry);
  const settle = settleOnce(outcome.entry, request.signal);
  let response: Response;
  try {
    response = await run(outcome.entry);
  } catch (error) {
    settle({ thrown: true, error });
    throw error;
  }
  if (isPassThrough(response)) {
    void outcome.entry.release({ failed: false });
    throw new PassThroughMisuseError();
  }
  return settleWhenFinished(response, { status: response.status, thrown: failed() }, settle);
}

/**
 * A Next.js middleware's (or Next 16 proxy's) pass-through, `NextResponse.next()` or a rewrite:
 * not the answer to the order but a signal to go on to the route, which has not run yet.
 */
function isPassThrough(response: Response): boolean {
  return response.headers.has('x-middleware-next') || response.headers.has('x-middleware-rewrite');
}

/** Thrown by the token guard when its handler answered with a middleware pass-through (the claim is released first). */
export class PassThroughMisuseError extends Error {
  constructor() {
    super(
      'waitgate: withEntryToken/requireEntryToken got a middleware pass-through (NextResponse.next() or a rewrite), which has no body of its own: ' +
        'the order has not run yet, so the token was released, not consumed. Verify the pass in middleware.ts/proxy.ts with verifyEntryPass ' +
        "from 'waitgate/pass' (no store call), and claim it in the route handler with withEntryToken.",
    );
    this.name = 'PassThroughMisuseError';
  }
}

/**
 * Settles an entry once, from how its request ended (core.ts `settleEnded`). A request whose
 * signal aborts first (the client hung up: Node adapters, Bun, Deno and Next.js abort it)
 * releases as a failed order, like a closed connection in the Node adapters.
 */
function settleOnce(entry: Entry, signal: AbortSignal): (end: OrderEnd) => void {
  let done = false;
  const settle = (end: OrderEnd) => {
    if (done) return;
    done = true;
    signal.removeEventListener('abort', onAbort);
    settleEnded(entry, end);
  };
  const onAbort = () => settle({ aborted: true });
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
function settleWhenFinished(response: Response, end: OrderEnd, settle: (end: OrderEnd) => void): Response {
  if (end.thrown || !response.ok || response.body === null) {
    settle(end);
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
          settle(end);
        } catch (error) {
          settle({ aborted: true });
          controller.error(error);
        }
      },
      async cancel(reason) {
        settle({ aborted: true });
        await reader.cancel(reason);
      },
    },
    // No read-ahead: a pull happens only when the runtime asks, so the end really is the last read.
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
