// The generation of each queue as this instance last saw it (lua/includes/generation.lua):
// sent with every script, so a queue whose state vanished is detected, not silently re-created.

export class Generations {
  readonly #known = new Map<string, string>();

  /** The generation to send for `queue` ('' while this instance has seen none). */
  expected(queue: string): string {
    return this.#known.get(queue) ?? '';
  }

  /** Remembers the generation a reply carried: from now on, its disappearance is detected. */
  learn(queue: string, generation: unknown): void {
    if (typeof generation === 'string' && generation !== '') this.#known.set(queue, generation);
  }

  /** After an operator has looked at a lost state: accept whatever the store holds now. */
  forget(queue: string): void {
    this.#known.delete(queue);
  }
}
