// waitgate/client: waits in the queue from a browser or Node 20 (global fetch), no dependencies.

import type { Position } from '../types.js';
import { isPowChallenge, solvePowChallenge } from './pow.js';
import { followStream } from './stream.js';

export type { Position, PositionStatus } from '../types.js';
export { isPowChallenge, solvePowChallenge, type PowChallenge } from './pow.js';

/** Where the queue routes are and how to reach them: shared by {@link waitForEntry} and {@link leave}. */
export interface QueueEndpoint {
  /** Base URL of the queue routes, e.g. `/queue` in a page or `https://shop.example/queue` in Node. */
  url: string;
  /** Headers sent with every request (e.g. authorization). */
  headers?: Record<string, string>;
  /** fetch credentials mode, e.g. `'include'` for cookies across origins. Default `'same-origin'`. */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** The fetch to use. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** Options of {@link waitForEntry}. */
export interface WaitForEntryOptions extends QueueEndpoint {
  /**
   * Stops waiting: the promise rejects with the signal's reason and no poll is sent
   * after it. The member keeps its place unless `leaveOnAbort` is set.
   */
  signal?: AbortSignal;
  /**
   * On abort, also leave the queue (a `DELETE` to the queue routes, sent with
   * `keepalive` so it survives the page being closed): the place is given up at once
   * instead of being admitted later and holding a token nobody uses. Default false.
   */
  leaveOnAbort?: boolean;
  /** Called with every position received, for the waiting-room page. */
  onPosition?: (position: Position) => void;
  /**
   * Follow the queue's event stream (`GET <url>/events`, Server-Sent Events) while waiting,
   * instead of polling: positions arrive as the line moves, and READY at once. When the stream is
   * refused (503 past the server's `maxStreams`, an older server) or cut, the client polls and
   * tries the stream again later (its Retry-After, or the stream's `retry:`). Default true.
   */
  stream?: boolean;
  /** Fraction of random spread around each polling interval. Default 0.2 (±20%). */
  jitter?: number;
  /** Longest wait between retries after errors, in seconds. Default 30. */
  maxBackoffSeconds?: number;
  /** Random source in [0, 1), for tests. Default Math.random. */
  random?: () => number;
  /**
   * Answers a challenge of the queue's gate (401 CHALLENGE_REQUIRED) that this client does not
   * solve by itself (it solves proof of work): e.g. shows a Turnstile widget and resolves with its
   * token, sent in the challenge's `header` with the next enter. Without it such a challenge
   * rejects with a {@link QueueClientError} carrying `challenge`.
   */
  onChallenge?: (challenge: unknown) => Promise<string>;
  /**
   * An invite code (docs/fair-entry.md): sent as `{ "code": "..." }` in the body of the enter
   * until one succeeds (the member then waits in the code's lane; a later re-entry goes
   * without it). An unknown or spent code rejects with a {@link QueueClientError} `CODE_INVALID`.
   */
  code?: string;
}

/** What {@link waitForEntry} resolves with once the member is admitted. */
export interface EntryGrant {
  /** Send it as the `X-Entry-Token` header of the order request. */
  entryToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  position: Position;
}

/**
 * The server refused the member for good (401, 400, 403, 409 ...), or the queue's state was
 * lost on the server (503 `QUEUE_STATE_LOST`): waiting again will not help.
 */
export class QueueClientError extends Error {
  /** HTTP status. */
  readonly status: number;
  /**
   * The body's `error.code` when the server sent one, e.g. `UNAUTHENTICATED`, `QUEUE_CLOSED`,
   * `IDENTITY_LIMIT` (409: another member id of the same identity holds the place) or `QUEUE_STATE_LOST`.
   */
  readonly code: string | undefined;
  /** With `CHALLENGE_REQUIRED`: the gate's challenge (docs/fair-entry.md). */
  readonly challenge: unknown;

  constructor(status: number, code: string | undefined, message: string, challenge?: unknown) {
    super(message);
    this.name = 'QueueClientError';
    this.status = status;
    this.code = code;
    this.challenge = challenge;
  }
}

/**
 * Enters the queue and waits until the member is READY: on the queue's event stream when the
 * server offers one (`stream`), else polling at the interval the server hints
 * (`pollingIntervalSeconds`, ±20% jitter so a crowd does not poll in step); the same
 * positions reach `onPosition` either way. After a 503, a 429 or a network error it honours `Retry-After`, or backs
 * off exponentially up to `maxBackoffSeconds`. If the member drops out of the
 * queue (e.g. an unused token expired), it enters again. A 503 `QUEUE_STATE_LOST`
 * (the queue was reset on the server) stops it: retrying would not help.
 *
 * @example
 * ```ts
 * const { entryToken } = await waitForEntry({ url: '/queue', onPosition: (p) => render(p) });
 * await fetch('/orders', { method: 'POST', headers: { 'x-entry-token': entryToken }, body });
 * ```
 * @throws {@link QueueClientError} when the server refuses (4xx other than 429) or the
 *   queue's state was lost (503 `QUEUE_STATE_LOST`); the signal's reason on abort.
 */
export async function waitForEntry(options: WaitForEntryOptions): Promise<EntryGrant> {
  try {
    return await poll(options);
  } catch (error) {
    if (options.signal?.aborted && options.leaveOnAbort) void leave(options).catch(() => undefined);
    throw error;
  }
}

/**
 * Leaves the queue: gives up the member's place, or drops its unused token (`DELETE`
 * on the queue routes). Sent with `keepalive`, so it can be called from `pagehide`.
 * Resolves true when the server answered 2xx.
 *
 * @example
 * ```ts
 * addEventListener('pagehide', () => void leave({ url: '/queue' }));
 * ```
 */
export async function leave(endpoint: QueueEndpoint): Promise<boolean> {
  const doFetch = endpoint.fetch ?? globalThis.fetch.bind(globalThis);
  const response = await doFetch(endpoint.url.replace(/\/+$/, ''), {
    method: 'DELETE',
    headers: { accept: 'application/json', ...endpoint.headers },
    credentials: endpoint.credentials ?? 'same-origin',
    keepalive: true,
  });
  await response.body?.cancel().catch(() => undefined);
  return response.ok;
}

async function poll(options: WaitForEntryOptions): Promise<EntryGrant> {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const random = options.random ?? Math.random;
  const jitter = options.jitter ?? 0.2;
  const maxBackoffMs = (options.maxBackoffSeconds ?? 30) * 1000;
  const base = options.url.replace(/\/+$/, '');
  const { signal } = options;
  const spread = (ms: number) => ms * (1 + (random() * 2 - 1) * jitter);

  let entering = true;
  let failures = 0;
  /** The answer to the gate's last challenge, sent with the next enter (a header: its name and value). */
  let answer: [string, string] | undefined;
  let challenges = 0;
  /** The invite code, until an enter with it succeeds. */
  let code = options.code;
  /** When the event stream may be tried (again): after a refusal or a cut, its Retry-After or `retry:`. */
  let streamAt = options.stream === false ? Number.POSITIVE_INFINITY : 0;
  for (;;) {
    signal?.throwIfAborted();
    let response: Response;
    try {
      response = await doFetch(entering ? `${base}/enter` : `${base}/position`, {
        method: entering ? 'POST' : 'GET',
        headers: {
          accept: 'application/json',
          ...options.headers,
          ...(entering && answer ? { [answer[0]]: answer[1] } : {}),
          ...(entering && code !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(entering && code !== undefined ? { body: JSON.stringify({ code }) } : {}),
        credentials: options.credentials ?? 'same-origin',
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      failures++;
      await sleep(spread(backoffMs(failures, maxBackoffMs)), signal);
      continue;
    }

    if (response.status === 503 && (await isStateLost(response))) throw await refusal(response);
    if (response.status === 503 || response.status === 429 || response.status >= 500) {
      failures++;
      await response.body?.cancel().catch(() => undefined);
      const hinted = retryAfterMs(response);
      // Never earlier than the server asked: the jitter only adds to a Retry-After.
      await sleep(hinted === null ? spread(backoffMs(failures, maxBackoffMs)) : hinted * (1 + random() * jitter), signal);
      continue;
    }
    if (!response.ok) {
      const refused = await refusal(response);
      // The gate asks for work: solve (or have onChallenge answer) and enter again, a few times at most.
      if (!entering || refused.code !== 'CHALLENGE_REQUIRED' || ++challenges > 3) throw refused;
      const c = refused.challenge as { header?: unknown } | null;
      if (isPowChallenge(c)) answer = [c.header, await solvePowChallenge(c, signal)];
      else if (options.onChallenge && typeof c?.header === 'string') answer = [c.header, await options.onChallenge(c)];
      else throw refused;
      continue;
    }
    challenges = 0;
    answer = undefined;
    if (entering) code = undefined;

    const position = await readPosition(response);
    if (!position) {
      failures++; // a 200 that is not a position (a proxy's error page...): back off as for a 5xx
      await sleep(spread(backoffMs(failures, maxBackoffMs)), signal);
      continue;
    }
    failures = 0;
    options.onPosition?.(position);
    if (position.status === 'READY' && position.entryToken !== null && position.entryTokenExpiresAt !== null) {
      return { entryToken: position.entryToken, expiresAt: position.entryTokenExpiresAt, position };
    }
    entering = position.status === 'NOT_ENTERED';
    if (!entering && Date.now() >= streamAt) {
      const credentials = options.credentials ?? 'same-origin';
      const followed = await followStream({ url: base, headers: options.headers ?? {}, credentials, fetch: doFetch, signal, onPosition: options.onPosition, retryAfterMs });
      if (followed.kind === 'ready' && followed.position.entryToken !== null && followed.position.entryTokenExpiresAt !== null) {
        return { entryToken: followed.position.entryToken, expiresAt: followed.position.entryTokenExpiresAt, position: followed.position };
      }
      entering = followed.kind === 'not-entered';
      if (followed.kind === 'fallback') streamAt = Date.now() + followed.retryMs;
      if (entering) continue;
    }
    await sleep(spread(position.pollingIntervalSeconds * 1000), signal);
  }
}

/** A 503 whose body says QUEUE_STATE_LOST (read from a clone: the caller may read the body too). */
async function isStateLost(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: string } };
    return body.error?.code === 'QUEUE_STATE_LOST';
  } catch {
    return false;
  }
}

async function readPosition(response: Response): Promise<Position | null> {
  try {
    const body = (await response.json()) as Position;
    return typeof body === 'object' && body !== null && typeof body.status === 'string' ? body : null;
  } catch {
    return null;
  }
}

function backoffMs(failures: number, maxMs: number): number {
  return Math.min(maxMs, 1000 * 2 ** (failures - 1));
}

/** Retry-After in seconds (or an HTTP date), as milliseconds; null when absent or unreadable. */
function retryAfterMs(response: Response): number | null {
  const value = response.headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

async function refusal(response: Response): Promise<QueueClientError> {
  let code: string | undefined;
  let challenge: unknown;
  let message = `The queue refused the request (HTTP ${response.status}).`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string; challenge?: unknown } };
    code = body.error?.code;
    if (body.error?.message) message = body.error.message;
    challenge = body.error?.challenge;
  } catch {
    // not JSON: keep the generic message
  }
  return new QueueClientError(response.status, code, message, challenge);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
