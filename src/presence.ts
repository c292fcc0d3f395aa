// Signs of life, batched: the members this instance answered lately, recorded in the
// store in one call per flush, so that a member who polls is never dropped as
// abandoned, on any instance, even when its polls are answered from positionCache.

/** How often the members answered are recorded, at most (store clock). */
export const PRESENCE_FLUSH_MS = 1000;
/** Member ids per store call (lua/touchMembers-5.lua MAX_MEMBERS). */
const BATCH = 1000;

/**
 * Collects member ids (deduplicated) and hands them to `record` at most once per
 * {@link PRESENCE_FLUSH_MS} of the store's clock, or when a batch is full, and on an
 * unref'd timer for the tail. The caller notes only members near the head of the line
 * (and READY members whose token may await its pick-up), so the work follows the head,
 * not the crowd. A failed flush is dropped: the members poll again.
 */
export class Presence {
  readonly #record: (memberIds: string[]) => Promise<unknown>;
  readonly #pending = new Set<string>();
  #lastFlushAt = -Infinity;
  /** The latest store time seen (an answer from positionCache carries its snapshot's, which can be older). */
  #latestNow = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  constructor(record: (memberIds: string[]) => Promise<unknown>) {
    this.#record = record;
  }

  /** A sign of life of `memberId`, answered at the store's time `storeNow` (epoch ms). */
  note(memberId: string, storeNow: number): void {
    this.#pending.add(memberId);
    this.#latestNow = Math.max(this.#latestNow, storeNow);
    if (this.#pending.size >= BATCH || this.#latestNow - this.#lastFlushAt >= PRESENCE_FLUSH_MS) {
      void this.flush();
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), PRESENCE_FLUSH_MS);
      this.#timer.unref?.();
    }
  }

  /** The store's time, from an answer that carries no member (e.g. an admission step). */
  observe(storeNow: number): void {
    this.#latestNow = Math.max(this.#latestNow, storeNow);
  }

  /**
   * Records what is pending now, in batches; resolves when the store answered (admit()
   * awaits it, so its own instance's latest signs of life are in before it drops
   * anyone). Never rejects.
   */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastFlushAt = this.#latestNow;
    if (this.#pending.size === 0) return;
    const ids = [...this.#pending];
    this.#pending.clear();
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < ids.length; i += BATCH) calls.push(this.#record(ids.slice(i, i + BATCH)).catch(() => undefined));
    await Promise.all(calls);
  }
}
