// MemoryStore's revocations of signed passes (lua/revoke-5.lua, lua/revokedAt-2.lua in memory):
// per queue, member -> the moment its pass was revoked, kept `retainMs`.

export class Revocations {
  /** Per queue, in the order of revocation (a repeat moves to the end), so the oldest are first. */
  readonly #byQueue = new Map<string, Map<string, number>>();

  /** Records a revocation at `now`, forgetting those older than `retainMs` (each once: oldest first). */
  revoke(queue: string, memberId: string, now: number, retainMs: number): void {
    let revoked = this.#byQueue.get(queue);
    if (!revoked) this.#byQueue.set(queue, (revoked = new Map()));
    for (const [member, at] of revoked) {
      if (at >= now - retainMs) break;
      revoked.delete(member);
    }
    revoked.delete(memberId);
    revoked.set(memberId, now);
  }

  /** When the member was last revoked, or null. */
  revokedAt(queue: string, memberId: string): number | null {
    return this.#byQueue.get(queue)?.get(memberId) ?? null;
  }
}
