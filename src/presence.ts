// Signs of life, batched: the members this instance answered lately, recorded in the
// store in one call per flush, so that a member who polls is never dropped as
// abandoned, on any instance, even when its polls are answered from positionCache;
// and the READY answers, so that a token that was read is not dropped for want of a pick-up.

/** How often the members answered are recorded, at most (store clock). */
import type { MemberSnapshot } from './store/store.js';

export const PRESENCE_FLUSH_MS = 1000;
/** `WaitingQueue[LOOK_POSITION]`: a position whose READY is recorded as picked up only when the caller says so (event streams). @internal */
export const LOOK_POSITION = Symbol('waitgate.lookPosition');
/** Member ids per store call (lua/touchMembers-6.lua MAX_MEMBERS). */
const BATCH = 1000;
/** Ids kept for a later flush after a failed one, at most. */
const MAX_PENDING = 20_000;
/** Members whose last recording this instance remembers, at most (oldest forgotten first: they are recorded again). */
const MAX_RECORDED = 500_000;

/** What one flush records: waiting members seen near the head, and READY answers (pick-ups). */
export interface PresenceBatch {
  seen: string[];
  pickedUp: string[];
}

/**
 * Collects member ids (deduplicated) and hands them to `record` at most once per
 * {@link PRESENCE_FLUSH_MS} of the store's clock, or when a batch is full, and on an
 * unref'd timer for the tail. The caller notes only members near the head of the line
 * and READY answers, so the work follows the head, not the crowd. A failed flush keeps
 * its ids for the next one (a READY answer is not repeated: the client stopped polling).
 */
export class Presence {
  readonly #record: (batch: PresenceBatch) => Promise<unknown>;
  readonly #resendAfterMs: number;
  /**
   * Member -> store time its sign of life was last sent and the entry score it then
   * had, oldest first (Map order). A member that left and entered again has another
   * score: its next poll is sent at once, whichever instance answered before.
   */
  readonly #recorded = new Map<string, { at: number; score: number | null }>();
  readonly #seen = new Set<string>();
  readonly #pickedUp = new Set<string>();
  #lastFlushAt = -Infinity;
  /** The latest store time seen (an answer from positionCache carries its snapshot's, which can be older). */
  #latestNow = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param resendAfterMs a member's sign of life is sent again only once this long has
   *   passed since it was last sent (store clock); 0: on every poll. Abandonment needs a
   *   member seen within `abandonAfterSeconds`, not on each poll: a quarter of it keeps
   *   a polling member's last record at most 3/4 of it old (a quarter, plus its slowest
   *   interval with jitter and a flush, which the options keep below half).
   */
  constructor(record: (batch: PresenceBatch) => Promise<unknown>, resendAfterMs = 0) {
    this.#record = record;
    this.#resendAfterMs = resendAfterMs;
  }

  /**
   * A waiting member answered near the head (`seen`, with its entry `score` when
   * known), or a READY answer (`pickedUp`), at the store's time `storeNow`.
   */
  /**
   * What a poll's answer says of its member: WAITING below the presence `head` is a sign of
   * life; READY, when tokens must be picked up, is the pick-up.
   */
  notePoll(memberId: string, answer: MemberSnapshot, head: number | undefined, pickupRequired: boolean): void {
    if (answer.status === 'WAITING' && head !== undefined && answer.rank !== null && answer.rank < head)
      this.note(memberId, 'seen', answer.now, answer.score ?? null);
    this.notePickUp(memberId, answer, pickupRequired);
  }

  /** A READY answer given to its member (a poll's reply, or written to its event stream) is its pick-up, where one is required. */
  notePickUp(memberId: string, answer: MemberSnapshot, pickupRequired: boolean): void {
    if (answer.status === 'READY' && pickupRequired) this.note(memberId, 'pickedUp', answer.now);
  }

  note(memberId: string, kind: 'seen' | 'pickedUp', storeNow: number, score: number | null = null): void {
    this.#latestNow = Math.max(this.#latestNow, storeNow);
    if (kind === 'seen' && !this.#due(memberId, score)) return;
    (kind === 'seen' ? this.#seen : this.#pickedUp).add(memberId);
    if (this.#seen.size + this.#pickedUp.size >= BATCH || this.#latestNow - this.#lastFlushAt >= PRESENCE_FLUSH_MS) {
      void this.flush();
    } else {
      this.#flushLater();
    }
  }

  /** Whether a member's sign of life is to be sent now (and if so, remembers it as sent now). */
  #due(memberId: string, score: number | null): boolean {
    if (this.#resendAfterMs <= 0) return true;
    const now = this.#latestNow;
    const last = this.#recorded.get(memberId);
    if (last !== undefined && now - last.at < this.#resendAfterMs && last.score === score) return false;
    this.#recorded.delete(memberId); // re-insert: the Map's order is the order of recording
    this.#recorded.set(memberId, { at: now, score });
    // Forget what is old enough to be sent again anyway, and the oldest beyond the cap.
    for (const [id, { at }] of this.#recorded) {
      if (now - at < this.#resendAfterMs && this.#recorded.size <= MAX_RECORDED) break;
      this.#recorded.delete(id);
    }
    return true;
  }

  /** The member left (or entered again): its next answer near the head is sent at once. */
  forget(memberId: string): void {
    this.#recorded.delete(memberId);
  }

  /** The unref'd timer that flushes the tail, unless one is already set. */
  #flushLater(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => void this.flush(), PRESENCE_FLUSH_MS);
    this.#timer.unref?.();
  }

  /** The store's time, from an answer that carries no member (e.g. an admission step). */
  observe(storeNow: number): void {
    this.#latestNow = Math.max(this.#latestNow, storeNow);
  }

  /**
   * Records what is pending now, in batches of at most 1,000 ids; resolves when the
   * store answered (admit() awaits it, so its own instance's latest signs of life are
   * in before it drops anyone). Never rejects.
   */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastFlushAt = this.#latestNow;
    const seen = [...this.#seen];
    const pickedUp = [...this.#pickedUp];
    this.#seen.clear();
    this.#pickedUp.clear();
    const calls: Array<Promise<unknown>> = [];
    while (seen.length + pickedUp.length > 0) {
      const batch = { seen: seen.splice(0, BATCH), pickedUp: [] as string[] };
      batch.pickedUp = pickedUp.splice(0, BATCH - batch.seen.length);
      calls.push(this.#record(batch).catch(() => this.#keep(batch)));
    }
    await Promise.all(calls);
  }

  /** A failed batch waits for the next flush (bounded: past the cap, signs of life are dropped; members poll again). */
  #keep(batch: PresenceBatch): void {
    for (const id of batch.pickedUp) if (this.#seen.size + this.#pickedUp.size < MAX_PENDING) this.#pickedUp.add(id);
    for (const id of batch.seen) if (this.#seen.size + this.#pickedUp.size < MAX_PENDING) this.#seen.add(id);
    if (this.#seen.size + this.#pickedUp.size > 0) this.#flushLater();
  }
}

/**
 * A queue's presence tracker, or null when nothing judges signs of life (no abandonment and
 * no pick-up timeout) or the store cannot record them. A sign of life is sent again after a
 * quarter of abandonAfterSeconds, not on every poll (at a million polling, per-poll records
 * were most of Redis's work); the hold at the head judges seconds of silence, so with it
 * every poll near the head is sent.
 */
export function presenceFor(
  config: { abandonAfterMs: number | null; holdSilentAfterMs: number | null; pickupTimeoutMs: number | null },
  canTouch: boolean,
  record: (batch: PresenceBatch) => Promise<unknown>,
): Presence | null {
  const { abandonAfterMs, holdSilentAfterMs, pickupTimeoutMs } = config;
  if ((abandonAfterMs === null && pickupTimeoutMs === null) || !canTouch) return null;
  return new Presence(record, abandonAfterMs !== null && holdSilentAfterMs === null ? abandonAfterMs / 4 : 0);
}
