// The push half of waitForEntry: follows `GET <url>/events` (Server-Sent Events over fetch, so the
// endpoint's headers and credentials go with it, in browsers and in Node) until the member is
// READY, and says when to try it again otherwise; waitForEntry polls meanwhile.

import type { Position } from '../types.js';
import { readSse } from './sse.js';

/** How following a stream ended. */
export type StreamOutcome =
  /** READY: the `ready` event's position. */
  | { kind: 'ready'; position: Position }
  /** The member is not in the queue (NOT_ENTERED): enter again. */
  | { kind: 'not-entered' }
  /** Refused (503 past `maxStreams`, no such route, an old server …), cut, or ended: poll, and try again after `retryMs`. */
  | { kind: 'fallback'; retryMs: number };

/** Used when a refusal carries no Retry-After and a cut stream sent no `retry:`. */
const DEFAULT_RETRY_MS = 30_000;

export interface StreamRequest {
  url: string;
  headers: Record<string, string>;
  credentials: 'omit' | 'same-origin' | 'include';
  fetch: typeof fetch;
  signal: AbortSignal | undefined;
  onPosition: ((position: Position) => void) | undefined;
  retryAfterMs: (response: Response) => number | null;
}

/** Follows the member's event stream; rejects only with the signal's reason. */
export async function followStream(request: StreamRequest): Promise<StreamOutcome> {
  const { signal } = request;
  let retryMs = DEFAULT_RETRY_MS;
  let response: Response;
  try {
    response = await request.fetch(`${request.url}/events`, {
      headers: { accept: 'text/event-stream', ...request.headers },
      credentials: request.credentials,
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return { kind: 'fallback', retryMs };
  }
  if (!response.ok || !response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'fallback', retryMs: request.retryAfterMs(response) ?? DEFAULT_RETRY_MS };
  }
  try {
    for await (const item of readSse(response.body)) {
      if (item.kind === 'retry') {
        retryMs = item.ms;
        continue;
      }
      const { event, data } = item.event;
      if (event !== 'position' && event !== 'ready') continue;
      const position = parsePosition(data);
      if (!position) continue;
      request.onPosition?.(position);
      if (event === 'ready' && position.status === 'READY') return { kind: 'ready', position };
      if (position.status === 'NOT_ENTERED') return { kind: 'not-entered' };
    }
  } catch {
    if (signal?.aborted) throw signal.reason;
  }
  return { kind: 'fallback', retryMs };
}

function parsePosition(data: string): Position | null {
  try {
    const body = JSON.parse(data) as Position;
    return typeof body === 'object' && body !== null && typeof body.status === 'string' ? body : null;
  } catch {
    return null;
  }
}
