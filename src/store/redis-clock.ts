// Redis's clock as seen from this process, per queue: turns a caller's deadline
// (a performance.now() instant) into Redis time for the late-enter fence.

/** How long one reply's reading of Redis's clock is trusted. */
export const CLOCK_SAMPLE_TTL_MS = 10_000;
const DRIFT_MARGIN_MS = CLOCK_SAMPLE_TTL_MS / 1000;

interface Reading {
  /** The tightest lower bound of (Redis TIME − performance.now()) among this period's replies. */
  offset: number;
  /** performance.now() when the period began. */
  since: number;
}

/**
 * A script ran at Redis time `now` before its reply was read at `readAt`, so
 * `now − readAt` is a lower bound of (Redis TIME − performance.now()): a deadline
 * translated with it is never later than the real one. Each queue keeps its own
 * bound, because each queue lives on one node (its hash tag's slot) and nodes'
 * clocks differ; and a bound is trusted for {@link CLOCK_SAMPLE_TTL_MS} only, so
 * after a failover to a node whose clock is behind, or a clock stepped back, the
 * bound follows the new clock within that time (and at once after a reconnect,
 * when the store calls {@link RedisClock.reset}). Kept as two periods of half
 * that length: constant memory per queue, no list of samples.
 */
export class RedisClock {
  readonly #queues = new Map<string, { current: Reading; previous: Reading | null }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Learns from a reply of `queue` carrying Redis time `redisNow` (epoch ms), read at `readAt` (performance.now()). */
  observe(queue: string, redisNow: number, readAt: number): void {
    if (!Number.isFinite(redisNow) || redisNow <= 0) return;
    const bound = redisNow - readAt;
    const entry = this.#rotate(queue);
    if (!entry) {
      this.#queues.set(queue, { current: { offset: bound, since: this.#now() }, previous: null });
      return;
    }
    entry.current.offset = Math.max(entry.current.offset, bound);
  }

  /** Redis time (epoch ms) at `instant` (performance.now()) for `queue`, a lower bound; undefined until a reply taught it. */
  toRedisTime(queue: string, instant: number): number | undefined {
    const entry = this.#rotate(queue);
    if (!entry) return undefined;
    const offset = Math.max(entry.previous?.offset ?? -Infinity, entry.current.offset);
    if (offset === -Infinity) return undefined;
    // Clocks drift apart by at most ~0.5 ms/s (NTP's slew): 1 ms per second of trust keeps it a lower bound.
    return Math.floor(instant + offset - DRIFT_MARGIN_MS);
  }

  /** Forgets every queue's bound: the connection was re-established, perhaps to another node. */
  reset(): void {
    this.#queues.clear();
  }

  /** Drops periods older than the sample TTL; undefined when nothing trusted is left. */
  #rotate(queue: string): { current: Reading; previous: Reading | null } | undefined {
    const entry = this.#queues.get(queue);
    if (!entry) return undefined;
    const half = CLOCK_SAMPLE_TTL_MS / 2;
    const age = this.#now() - entry.current.since;
    if (age < half) return entry;
    if (age >= CLOCK_SAMPLE_TTL_MS) {
      this.#queues.delete(queue);
      return undefined;
    }
    // The current period becomes the previous one; a new period starts with the same bound
    // (still trusted until the previous period ages out).
    entry.previous = entry.current;
    entry.current = { offset: -Infinity, since: this.#now() };
    return entry;
  }
}
