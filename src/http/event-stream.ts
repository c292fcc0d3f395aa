// The push half of the queue routes (`GET <prefix>/events`): one hub per queue routes keeps the
// member streams of this instance and tells each its place as Server-Sent Events. The place is
// looked up as a poll would (`queue.position`), so with `positionCache` it comes from the shared
// snapshot and the pushed admission steps, and costs the store nothing per member per step; each
// look is a sign of life (§8), at least at the member's polling pace. Framework code only writes
// the chunks (node-events.ts, web.ts).

import { errorResponse, NO_STORE, toHttpResponse } from './error-response.js';
import { MemberStream, shownControlsOf, type MemberStreamHandle, type StreamKeeper } from './member-stream.js';
import { normalizeMemberId, type MemberId } from '../member-id.js';
import type { QueueConfig } from '../options.js';
import { WATCH_HEAD_MOVES } from '../position-cache.js';
import type { HeadMovesWatch } from '../store/store.js';
import type { AdmittedMember } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';
import type { HttpResult } from './result.js';

export { sseEvent, type MemberStreamHandle, type StreamSink } from './member-stream.js';

/** Streams one instance serves at once by default (the `maxStreams` option of the queue routes). */
export const DEFAULT_MAX_STREAMS = 10_000;
/** A stream that wrote nothing for this long gets a comment line (proxies close idle connections). */
export const HEARTBEAT_MS = 15_000;
/** How often the hub looks at its streams: heartbeats, and the members due for a look at their polling pace that no round took. */
const TICK_MS = 1000;
/** Admission steps closer together than this share one round of looks (delivery stays well within 1 s). */
const ROUND_GAP_MS = 200;
/** Streams looked up in one event-loop turn: a round of 10,000 takes many turns, so the instance keeps answering. */
const LOOK_BATCH = 256;
/** After a change of the controls, the rounds of this long look up every stream (longer than a snapshot's default `refreshMs`). */
const EVERYONE_MS = 1000;

/** Bytes written to a stream and not yet taken by its client past which the stream is cut (about 200 events). */
export const MAX_UNREAD_BYTES = 64 * 1024;

/** The headers of an event stream: no caching, no buffering by proxies (nginx) or compression. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...NO_STORE,
  'content-type': 'text/event-stream; charset=utf-8',
  'x-accel-buffering': 'no',
});

/** What `GET …/events` answers: a JSON answer (401, 400, 503 …), or a stream. */
export type StreamOpening = { kind: 'respond'; result: HttpResult } | { kind: 'stream'; headers: Record<string, string>; stream: MemberStreamHandle };

/** The `retry:` field: the member's polling interval in ms, ±20% so that a restart's reconnects spread out. */
export function retryField(pollingIntervalSeconds: number, random: () => number = Math.random): string {
  return `retry: ${Math.max(1000, Math.round(pollingIntervalSeconds * 1000 * (0.8 + 0.4 * random())))}\n\n`;
}

/**
 * The member streams of one queue routes on this instance, and how often each is looked up.
 *
 * A round follows each admission step the store pushes (with `positionCache`: estimates from
 * the shared snapshot, exact only near the head, in shared script calls) and this instance's
 * own steps, drops and control changes. It looks up the members near the head (below
 * {@link nearHeadRank}: they see every step), the members this instance just admitted (READY
 * at once) and the members due at their polling pace (at least every 5 s: SLOWEST_LOOK_MS):
 * a member further back is told its new place at that pace, as polling would tell it, not at
 * every step. A change of the queue's mode, message or opening seen near the head makes the
 * next rounds look everyone. Looks run in batches, one event-loop turn each, so one step's
 * fan-out never holds the instance up; the members nearest the head go first. A tick every
 * second looks up the members due near the head, and further back those due for a second that
 * no round took (no steps come: a member is still looked at about as often as it would poll,
 * which keeps it present for `abandonAfterSeconds`), and sends heartbeats. One timer and one
 * watch per hub, running only while a stream is open.
 */
export class EventHub implements StreamKeeper {
  readonly #queue: WaitingQueue;
  readonly #maxStreams: number;
  readonly #nearHead: number;
  readonly #streams = new Set<MemberStream>();
  /** The one stream of each member (a newer one replaces it): a member this instance admits is looked up at once. */
  readonly #byMember = new Map<string, MemberStream>();
  /** Streams to look up in the next round whatever their pace (their member was just admitted). */
  #urgent = new Set<MemberStream>();
  /** Rounds that start before this look every stream (performance.now()). */
  #everyoneUntil = Number.NEGATIVE_INFINITY;
  /** The queue's shown controls as the last look near the head told them (null: none yet). */
  #shownControls: string | null = null;
  #timer: NodeJS.Timeout | undefined;
  #watch: HeadMovesWatch | null = null;
  #roundTimer: NodeJS.Timeout | undefined;
  #rounding = false;
  #again = false;
  #lastRoundAt = Number.NEGATIVE_INFINITY;
  readonly #onStep = (): void => this.#schedule();
  readonly #onAdmitted = (members: readonly AdmittedMember[]): void => {
    for (const { memberId } of members) {
      const stream = this.#byMember.get(memberId);
      if (stream) this.#urgent.add(stream);
    }
    this.#schedule();
  };
  readonly #onControls = (): void => this.#lookEveryone();

  constructor(queue: WaitingQueue, maxStreams: number = DEFAULT_MAX_STREAMS) {
    this.#queue = queue;
    this.#maxStreams = maxStreams;
    this.#nearHead = nearHeadRank(queue.config);
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
   * told by a later round or by that look itself; never missed. One stream per member: a
   * newer one (a reload, another tab) ends the older, so a member never holds two places.
   */
  async open(memberId: MemberId): Promise<StreamOpening> {
    let stream: MemberStream | undefined;
    try {
      const id = normalizeMemberId(memberId);
      this.#byMember.get(id)?.end(); // the newest tab wins
      if (this.#streams.size >= this.#maxStreams) return this.refuse();
      stream = new MemberStream(this, id);
      this.#add(stream);
      // The retry field goes first; the first event follows it in the pending chunks.
      const pending: string[] = [];
      const position = await stream.look(this.#queue);
      pending.push(retryField(position?.pollingIntervalSeconds ?? 1));
      return { kind: 'stream', headers: { ...EVENT_STREAM_HEADERS }, stream: withFirst(stream, pending) };
    } catch (error) {
      stream?.close();
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
    if (!this.#streams.delete(stream)) return;
    this.#urgent.delete(stream);
    if (this.#byMember.get(stream.memberId) === stream) this.#byMember.delete(stream.memberId);
    if (this.#streams.size > 0) return;
    clearInterval(this.#timer);
    clearTimeout(this.#roundTimer);
    this.#timer = this.#roundTimer = undefined;
    this.#watch?.stop();
    this.#watch = null;
    this.#queue.off('admitted', this.#onAdmitted).off('abandoned', this.#onStep).off('controls', this.#onControls);
  }

  #add(stream: MemberStream): void {
    this.#streams.add(stream);
    this.#byMember.set(stream.memberId, stream);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref?.();
    this.#queue.on('admitted', this.#onAdmitted).on('abandoned', this.#onStep).on('controls', this.#onControls);
    // Every step of every instance, where the store pushes them, when the positions come from the shared snapshot.
    if (this.#queue.config.positionCache) this.#watch = this.#queue[WATCH_HEAD_MOVES]?.(this.#onStep) ?? null;
  }

  /**
   * Every stream is looked up by the rounds of the next EVERYONE_MS, one at once: a
   * snapshot read before the change still shows the old controls for up to `refreshMs`.
   */
  #lookEveryone(): void {
    this.#everyoneUntil = performance.now() + EVERYONE_MS;
    this.#schedule();
    setTimeout(() => this.#schedule(), EVERYONE_MS / 2).unref?.();
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
    const now = (this.#lastRoundAt = performance.now());
    const everyone = now < this.#everyoneUntil;
    const urgent = this.#urgent;
    this.#urgent = new Set();
    const first: MemberStream[] = [...urgent];
    const then: MemberStream[] = [];
    for (const stream of this.#streams) {
      if (urgent.has(stream)) continue;
      if (stream.rank === null || stream.rank < this.#nearHead) first.push(stream);
      // Due by the time the next round could start: steps a second apart then keep a 5 s pace at 5 s, not 6.
      else if (everyone || now >= stream.dueAt - ROUND_GAP_MS) then.push(stream);
    }
    await this.#lookAll(first.concat(then));
    this.#rounding = false;
    if (this.#again) {
      this.#again = false;
      this.#schedule();
    }
  }

  /**
   * Looks streams up, LOOK_BATCH at a time (exact look-ups of a batch share script calls),
   * yielding to the event loop between batches; a failed look waits for its retry.
   */
  async #lookAll(streams: MemberStream[]): Promise<void> {
    for (let i = 0; i < streams.length; i += LOOK_BATCH) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(streams.slice(i, i + LOOK_BATCH).map((s) => this.#look(s)));
    }
  }

  async #look(stream: MemberStream): Promise<void> {
    const position = await stream.look(this.#queue).catch(() => null);
    // Only answers near the head (exact with positionCache) tell of a change: estimates may come from an older snapshot.
    if (position === null || (stream.rank !== null && stream.rank >= this.#nearHead)) return;
    const shown = shownControlsOf(position);
    if (this.#shownControls !== null && shown !== this.#shownControls) this.#lookEveryone();
    this.#shownControls = shown;
  }

  #tick(): void {
    const now = performance.now();
    const due: MemberStream[] = [];
    for (const stream of this.#streams) {
      // Further back, a tick late: while steps come, the round after a step takes the members due, so what they are told is fresh.
      const far = stream.rank !== null && stream.rank >= this.#nearHead;
      if (now >= stream.dueAt + (far ? TICK_MS : 0)) due.push(stream);
      if (now - stream.lastWriteAt >= HEARTBEAT_MS) stream.write(':\n\n');
    }
    if (due.length > 0) void this.#lookAll(due);
  }
}

/**
 * The rank below which a member is looked up at every admission step: the fastest polling
 * tier (with more than one tier), and at least two full bursts, so a member a step can admit
 * hears READY from the round of that step, whichever instance admitted it.
 */
export function nearHeadRank(config: Pick<QueueConfig, 'pollingIntervals' | 'admitBurst'>): number {
  const tiers = config.pollingIntervals;
  const fastest = tiers.length > 1 ? (tiers[0]!.belowRank ?? 0) : 0;
  return Math.max(fastest, 2 * config.admitBurst);
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
