// One member's event stream (GET …/events, event-stream.ts): the chunks said before its response
// is attached and after, what its last look told it, and when it is due for the next look at its
// polling pace. Framework code only writes the chunks (node-events.ts, web.ts).

import { LOOK_POSITION } from '../presence.js';
import type { Position } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';

/** Where a stream's chunks go: the framework's response. */
export interface StreamSink {
  write(chunk: string): void;
  end(): void;
}

/** An accepted stream: attach the response once its head is sent; close it when the client hangs up. */
export interface MemberStreamHandle {
  /** Writes what was said before (the `retry:` and the first event), then every later chunk. */
  attach(sink: StreamSink): void;
  /** The client went away (or the response failed): forgets the stream. Idempotent. */
  close(): void;
}

/** The hub that keeps the stream: told when it ends or closes. */
export interface StreamKeeper {
  forget(stream: MemberStream): void;
}

/**
 * The longest time between two looks of a member further back, whatever its polling interval: a
 * stream tells a new place no later than polling every 5 s would (the pace SPEC §16 compares with).
 */
export const SLOWEST_LOOK_MS = 5000;

/**
 * A look that failed (the store is down) is tried again after 1 s, then 2, 4, ... up to 30 s
 * while it keeps failing, each ±50%: during an outage an instance's streams back off as polling
 * clients do on a 503, instead of asking the store for every stream every second in step.
 */
const RETRY_LOOK_MS = 1000;
const SLOWEST_RETRY_MS = 30_000;

/** The wait before the next look after `failures` failed looks in a row (1, 2, ...). */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  return Math.min(SLOWEST_RETRY_MS, RETRY_LOOK_MS * 2 ** (failures - 1)) * (0.5 + random());
}

/** One SSE event: its name and the JSON of the position, on one `data:` line. */
export function sseEvent(event: 'position' | 'ready', position: Position | string): string {
  return `event: ${event}\ndata: ${typeof position === 'string' ? position : JSON.stringify(position)}\n\n`;
}

/** What the page shows of the queue's controls (not the stock, which moves with every order): a change of it is told to every stream. */
export function shownControlsOf(position: Position): string {
  return `${position.queueMode}\n${position.opensAt ?? ''}\n${position.message ?? ''}`;
}

export class MemberStream implements MemberStreamHandle {
  /** Normalized (normalizeMemberId), as the `admitted` event names members. */
  readonly memberId: string;
  readonly #keeper: StreamKeeper;
  #sink: StreamSink | null = null;
  #pending: string[] = [];
  #ended = false;
  #closed = false;
  /** Looks started and the latest applied: an older look that resolves late says nothing. */
  #started = 0;
  #applied = 0;
  #lastJson = '';
  #failures = 0; // failed looks in a row
  /** Records the READY said before the response was attached as picked up, once it is written to it. */
  #pickUp: (() => void) | null = null;
  lastWriteAt = performance.now();
  /** When this member is due for a look at its polling pace, at most SLOWEST_LOOK_MS away (performance.now()); +Infinity while a look is under way. */
  dueAt = 0;
  /** The rank of the last look (null: not known yet, or not ranked — drawn, or not waiting). */
  rank: number | null = null;

  constructor(keeper: StreamKeeper, memberId: string) {
    this.#keeper = keeper;
    this.memberId = memberId;
  }

  get closed(): boolean {
    return this.#closed || this.#ended;
  }

  /** Looks the member up; the answer is told unless a later look was told first. Rejects as `queue.position` does. */
  async look(queue: WaitingQueue): Promise<Position | null> {
    const ticket = ++this.#started;
    const startedAt = performance.now(); // the pace counts from the look's start: a slow answer does not slow it down
    this.dueAt = Number.POSITIVE_INFINITY;
    let position: Position;
    let pickUp: () => void;
    try {
      // A READY is recorded as picked up only once written to the open connection (pickupTimeoutSeconds).
      ({ position, pickUp } = await queue[LOOK_POSITION](this.memberId, false));
    } catch (error) {
      this.#failures++;
      if (ticket === this.#started) this.dueAt = performance.now() + retryDelayMs(this.#failures);
      throw error;
    }
    this.#failures = 0;
    if (this.closed || ticket < this.#applied) return null;
    this.#applied = ticket;
    if (ticket === this.#started) this.dueAt = startedAt + Math.min(position.pollingIntervalSeconds * 1000, SLOWEST_LOOK_MS);
    this.rank = position.status === 'WAITING' ? position.rank : null;
    this.#tell(position, pickUp);
    return position;
  }

  /** `ready` once (then the stream ends: picked up, now or when attached), or `position` when anything in it changed. */
  #tell(position: Position, pickUp: () => void): void {
    if (position.status === 'READY') {
      this.write(sseEvent('ready', position));
      if (this.#sink) pickUp();
      else this.#pickUp = pickUp;
      this.end();
      return;
    }
    const json = JSON.stringify(position);
    if (json === this.#lastJson) return;
    this.#lastJson = json;
    this.write(sseEvent('position', json));
  }

  write(chunk: string): void {
    if (this.closed) return;
    this.lastWriteAt = performance.now();
    if (this.#sink) this.#sink.write(chunk);
    else this.#pending.push(chunk);
  }

  end(): void {
    if (this.closed) return;
    this.#ended = true;
    this.#keeper.forget(this);
    this.#sink?.end();
  }

  attach(sink: StreamSink): void {
    if (this.#closed || this.#sink) return;
    this.#sink = sink;
    for (const chunk of this.#pending) sink.write(chunk);
    this.#pending = [];
    this.#pickUp?.();
    this.#pickUp = null;
    if (this.#ended) sink.end();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#keeper.forget(this);
  }
}
