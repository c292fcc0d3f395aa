// Arrivals per second at one instance's enter route, over a sliding window of whole seconds: the
// numerator of a gate's `pressure`, measured in process so that it costs the store nothing.

const WINDOW_SECONDS = 10;

export class ArrivalMeter {
  readonly #counts = new Array<number>(WINDOW_SECONDS).fill(0);
  readonly #seconds = new Array<number>(WINDOW_SECONDS).fill(-1);
  #startedAt: number | undefined;

  arrive(now: number): void {
    this.#startedAt ??= now;
    const second = Math.floor(now / 1000);
    const slot = second % WINDOW_SECONDS;
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second;
      this.#counts[slot] = 0;
    }
    this.#counts[slot]! += 1;
  }

  /** Arrivals per second over the last 10 s (over the time since the first arrival, when shorter, and at least 1 s). */
  perSecond(now: number): number {
    if (this.#startedAt === undefined) return 0;
    const second = Math.floor(now / 1000);
    let total = 0;
    for (let i = 0; i < WINDOW_SECONDS; i++) if (this.#seconds[i]! > second - WINDOW_SECONDS) total += this.#counts[i]!;
    const span = Math.min(WINDOW_SECONDS, Math.max(1, (now - this.#startedAt) / 1000));
    return total / span;
  }
}
