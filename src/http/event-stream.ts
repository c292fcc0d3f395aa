// The push half of the queue routes (`GET <prefix>/events`): one hub per queue routes keeps the
// member streams of this instance and tells each its place as Server-Sent Events. The place is
// looked up as a poll would (`queue.position`), so with `positionCache` it comes from the shared
// snapshot and the pushed admission steps, and costs the store nothing per member per step; each
// look is a sign of life (§8), at least at the member's polling pace. Framework code only writes
// the chunks (node-events.ts, web.ts).

import { errorResponse, NO_STORE, toHttpResponse } from './error-response.js';
import type { MemberId } from '../member-id.js';
import { WATCH_HEAD_MOVES } from '../position-cache.js';
import type { HeadMovesWatch } from '../store/store.js';
import type { Position } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';
import type { HttpResult } from './result.js';

/** Streams one instance serves at once by default (the `maxStreams` option of the queue routes). */
export const DEFAULT_MAX_STREAMS = 10_000;
/** A stream that wrote nothing for this long gets a comment line (proxies close idle connections). */
export const HEARTBEAT_MS = 15_000;
/** How often the hub looks at its streams: heartbeats, and the members due for a look at their polling pace. */
const TICK_MS = 1000;
/** Admission steps closer together than this share one round of looks (delivery stays well within 1 s). */
const ROUND_GAP_MS = 200;

/** Bytes written to a stream and not yet taken by its client past which the stream is cut (about 200 events). */
export const MAX_UNREAD_BYTES = 64 * 1024;

/** The headers of an event stream: no caching, no buffering by proxies (nginx) or compression. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...NO_STORE,
  'content-type': 'text/event-stream; charset=utf-8',
  'x-accel-buffering': 'no',
});

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

/** What `GET …/events` answers: a JSON answer (401, 400, 503 …), or a stream. */
export type StreamOpening = { kind: 'respond'; result: HttpResult } | { kind: 'stream'; headers: Record<string, string>; stream: MemberStreamHandle };

/** One SSE event: its name and the JSON of the position, on one `data:` line. */
export function sseEvent(event: 'position' | 'ready', position: Position | string): string {
  return `event: ${event}\ndata: ${typeof position === 'string' ? position : JSON.stringify(position)}\n\n`;
}

/** The `retry:` field: the member's polling interval in ms, ±20% so that a restart's reconnects spread out. */
export function retryField(pollingIntervalSeconds: number, random: () => number = Math.random): string {
  return `retry: ${Math.max(1000, Math.round(pollingIntervalSeconds * 1000 * (0.8 + 0.4 * random())))}\n\n`;
}

class MemberStream implements MemberStreamHandle {
  readonly memberId: MemberId;
  readonly #hub: EventHub;
  #sink: StreamSink | null = null;
  #pending: string[] = [];
  #ended = false;
  #closed = false;
  /** Looks started and the latest applied: an older look that resolves late says nothing. */
  #started = 0;
  #applied = 0;
  #lastJson = '';
  lastWriteAt = performance.now();
  /** When this member is due for a look at its polling pace (performance.now()). */
  dueAt = 0;

  constructor(hub: EventHub, memberId: MemberId) {
    this.#hub = hub;
    this.memberId = memberId;
  }

  get closed(): boolean {
    return this.#closed || this.#ended;
  }

  /** Looks the member up; the answer is told unless a later look was told first. Rejects as `queue.position` does. */
  async look(queue: WaitingQueue): Promise<Position | null> {
    const ticket = ++this.#started;
    const position = await queue.position(this.memberId);
    if (this.closed || ticket < this.#applied) return null;
    this.#applied = ticket;
    this.dueAt = performance.now() + position.pollingIntervalSeconds * 1000;
    this.#tell(position);
    return position;
  }

  /** `ready` once (then the stream ends), or `position` when anything in it changed. */
  #tell(position: Position): void {
    if (position.status === 'READY') {
      this.write(sseEvent('ready', position));
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
    this.#hub.forget(this);
    this.#sink?.end();
  }

  attach(sink: StreamSink): void {
    if (this.#closed || this.#sink) return;
    this.#sink = sink;
    for (const chunk of this.#pending) sink.write(chunk);
    this.#pending = [];
    if (this.#ended) sink.end();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#hub.forget(this);
  }
}

/**
 * The member streams of one queue routes on this instance. A round looks every stream up
 * after each admission step the store pushes (with `positionCache`: estimates from the shared
 * snapshot, exact only near the head, in shared script calls) and after this instance's own
 * steps, drops and control changes; a tick every second looks up the members due at their
 * polling pace (so a member is looked at least as often as it would poll, which keeps it
 * present for `abandonAfterSeconds`) and sends heartbeats. One timer and one watch per hub,
 * running only while a stream is open.
 */
export class EventHub {
  readonly #queue: WaitingQueue;
  readonly #maxStreams: number;
  readonly #streams = new Set<MemberStream>();
  #timer: NodeJS.Timeout | undefined;
  #watch: HeadMovesWatch | null = null;
  #roundTimer: NodeJS.Timeout | undefined;
  #rounding = false;
  #again = false;
  #lastRoundAt = Number.NEGATIVE_INFINITY;
  readonly #onStep = (): void => this.#schedule();

  constructor(queue: WaitingQueue, maxStreams: number = DEFAULT_MAX_STREAMS) {
    this.#queue = queue;
    this.#maxStreams = maxStreams;
  }

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  /** 503 TOO_MANY_STREAMS with Retry-After: the client polls the position instead. */
  refuse(): StreamOpening {
    const retryAfter = String(Math.max(1, Math.ceil(this.#queue.config.pollingIntervals[0]!.seconds)));
    return {
      kind: 'respond',
      result: errorResponse(503, 'TOO_MANY_STREAMS', 'This instance serves as many event streams as it may: poll the position instead.', {
        'retry-after': retryAfter,
      }),
    };
  }

  /**
   * Opens a stream for `memberId` (already resolved; undefined answers nothing here). The
   * stream is registered before its first look, so a READY that comes between the two is
   * told by a later round or by that look itself; never missed.
   */
  async open(memberId: MemberId): Promise<StreamOpening> {
    if (this.#streams.size >= this.#maxStreams) return this.refuse();
    const stream = new MemberStream(this, memberId);
    this.#add(stream);
    try {
      // The retry field goes first; the first event follows it in the pending chunks.
      const pending: string[] = [];
      const position = await stream.look(this.#queue);
      pending.push(retryField(position?.pollingIntervalSeconds ?? 1));
      return { kind: 'stream', headers: { ...EVENT_STREAM_HEADERS }, stream: withFirst(stream, pending) };
    } catch (error) {
      stream.close();
      const result = toHttpResponse(error);
      if (result) return { kind: 'respond', result };
      throw error;
    }
  }

  /** Ends every stream (the server is closing): clients reconnect, to another instance, after their `retry:`. */
  endAll(): void {
    for (const stream of [...this.#streams]) stream.end();
  }

  /** A stream ended or closed: no more looks; the timer and the watch stop with the last one. */
  forget(stream: MemberStream): void {
    if (!this.#streams.delete(stream) || this.#streams.size > 0) return;
    clearInterval(this.#timer);
    clearTimeout(this.#roundTimer);
    this.#timer = this.#roundTimer = undefined;
    this.#watch?.stop();
    this.#watch = null;
    this.#queue.off('admitted', this.#onStep).off('abandoned', this.#onStep).off('controls', this.#onStep);
  }

  #add(stream: MemberStream): void {
    this.#streams.add(stream);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref?.();
    this.#queue.on('admitted', this.#onStep).on('abandoned', this.#onStep).on('controls', this.#onStep);
    // Every step of every instance, where the store pushes them, when the positions come from the shared snapshot.
    if (this.#queue.config.positionCache) this.#watch = this.#queue[WATCH_HEAD_MOVES]?.(this.#onStep) ?? null;
  }

  /** A round soon: at once, or ROUND_GAP_MS after the last began; a step during a round makes another. */
  #schedule(): void {
    if (this.#rounding) {
      this.#again = true;
      return;
    }
    if (this.#roundTimer || this.#streams.size === 0) return;
    const wait = Math.max(0, this.#lastRoundAt + ROUND_GAP_MS - performance.now());
    this.#roundTimer = setTimeout(() => void this.#round(), wait);
    this.#roundTimer.unref?.();
  }

  async #round(): Promise<void> {
    this.#roundTimer = undefined;
    this.#rounding = true;
    this.#lastRoundAt = performance.now();
    await this.#lookAll([...this.#streams]);
    this.#rounding = false;
    if (this.#again) {
      this.#again = false;
      this.#schedule();
    }
  }

  /** Looks streams up together (exact look-ups share script calls); a failed look waits for the next round or tick. */
  async #lookAll(streams: MemberStream[]): Promise<void> {
    await Promise.all(streams.map((s) => s.look(this.#queue).catch(() => null)));
  }

  #tick(): void {
    const now = performance.now();
    const due: MemberStream[] = [];
    for (const stream of this.#streams) {
      if (now >= stream.dueAt) due.push(stream);
      if (now - stream.lastWriteAt >= HEARTBEAT_MS) stream.write(':\n\n');
    }
    if (due.length > 0) void this.#lookAll(due);
  }
}

/** The stream, with the chunks to send before everything it has said so far (the `retry:` field). */
function withFirst(stream: MemberStream, first: string[]): MemberStreamHandle {
  return {
    attach: (sink) => {
      for (const chunk of first) sink.write(chunk);
      stream.attach(sink);
    },
    close: () => stream.close(),
  };
}
