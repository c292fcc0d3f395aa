// Signs of life, batched: the members this instance answered lately, recorded in the
// store in one call per flush, so that a member who polls is never dropped as
// abandoned, on any instance, even when its polls are answered from positionCache;
// and the READY answers, so that a token that was read is not dropped for want of a pick-up.

/** How often the members answered are recorded, at most (store clock). */
export const PRESENCE_FLUSH_MS = 1000;
/** Member ids per store call (lua/touchMembers-5.lua MAX_MEMBERS). */
const BATCH = 1000;
/** Ids kept for a later flush after a failed one, at most. */
const MAX_PENDING = 20_000;

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
  readonly #seen = new Set<string>();
  readonly #pickedUp = new Set<string>();
  #lastFlushAt = -Infinity;
  /** The latest store time seen (an answer from positionCache carries its snapshot's, which can be older). */
  #latestNow = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  constructor(record: (batch: PresenceBatch) => Promise<unknown>) {
    this.#record = record;
  }

  /** A waiting member answered near the head (`seen`), or a READY answer (`pickedUp`), at the store's time `storeNow`. */
  note(memberId: string, kind: 'seen' | 'pickedUp', storeNow: number): void {
    (kind === 'seen' ? this.#seen : this.#pickedUp).add(memberId);
    this.#latestNow = Math.max(this.#latestNow, storeNow);
    if (this.#seen.size + this.#pickedUp.size >= BATCH || this.#latestNow - this.#lastFlushAt >= PRESENCE_FLUSH_MS) {
      void this.flush();
    } else {
      this.#flushLater();
    }
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
