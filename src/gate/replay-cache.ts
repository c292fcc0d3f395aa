// Solutions already accepted, until their challenge expires: each is accepted once (per instance:
// the cache is in process, so that a gate costs the store nothing; see docs/fair-entry.md).

import { dropOldest } from '../bounded.js';

export class ReplayCache {
  readonly #seen = new Map<string, number>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** True the first time `id` is offered before `expiresAt` (epoch ms); false for a repeat. */
  accept(id: string, expiresAt: number, now: number): boolean {
    const until = this.#seen.get(id);
    if (until !== undefined && until > now) return false;
    this.#seen.set(id, expiresAt);
    if (this.#seen.size > this.#max) this.#prune(now);
    return true;
  }

  /** Drops the expired entries; if all are live, the oldest (the cache's bound beats its memory). */
  #prune(now: number): void {
    for (const [id, until] of this.#seen) if (until <= now) this.#seen.delete(id);
    dropOldest(this.#seen, this.#max);
  }
}
