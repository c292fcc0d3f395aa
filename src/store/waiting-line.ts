// The in-memory waiting line: ordered by entry score (ties by the member id's UTF-8
// bytes, as a Redis sorted set orders them), with O(log n) rank.

/** Members by increasing score. Pops from the head; entering or leaving elsewhere splices. */
export class WaitingLine {
  #members: string[] = [];
  #scores: number[] = [];
  #head = 0;
  readonly #scoreOf = new Map<string, number>();

  get size(): number {
    return this.#scoreOf.size;
  }

  has(member: string): boolean {
    return this.#scoreOf.has(member);
  }

  /** Inserts in score order: O(1) for a score above every other (the usual entry), O(n) elsewhere (a drawn pre-queue place). */
  insert(member: string, score: number): void {
    this.#scoreOf.set(member, score);
    const last = this.#scores.length - 1;
    if (last < this.#head || score > this.#scores[last]!) {
      this.#members.push(member);
      this.#scores.push(score);
      return;
    }
    const i = this.#indexOf(score, member);
    this.#members.splice(i, 0, member);
    this.#scores.splice(i, 0, score);
  }

  /** The member's entry score, or null when not waiting. */
  seqOf(member: string): number | null {
    return this.#scoreOf.get(member) ?? null;
  }

  /** Entry scores of the first and the last waiting member (null when empty). */
  ends(): { head: number | null; last: number | null } {
    if (this.size === 0) return { head: null, last: null };
    return { head: this.#scores[this.#head]!, last: this.#scores[this.#scores.length - 1]! };
  }

  /** Entry score of the member at 0-based `rank`, O(1); null when the line is shorter. */
  seqAtRank(rank: number): number | null {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return null;
    return this.#scores[this.#head + rank]!;
  }

  /** 0-based rank, or null when not waiting. */
  rank(member: string): number | null {
    const score = this.#scoreOf.get(member);
    return score === undefined ? null : this.#indexOf(score, member) - this.#head;
  }

  /** How many members score below `score` (Redis ZCOUNT -inf (score), O(log n). */
  countBelow(score: number): number {
    let lo = this.#head;
    let hi = this.#scores.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#scores[mid]! < score) lo = mid + 1;
      else hi = mid;
    }
    return lo - this.#head;
  }

  /** The member at the head, or null when nobody waits. */
  head(): string | null {
    return this.size === 0 ? null : this.#members[this.#head]!;
  }

  /** The member at 0-based `rank`, O(1); null when the line is shorter. */
  memberAtRank(rank: number): string | null {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return null;
    return this.#members[this.#head + rank]!;
  }

  /**
   * Removes the first `count` members except those in `keep`, which stay at the head in
   * their order (members held at their place by an admission step): O(count).
   */
  removeHeadExcept(count: number, keep: ReadonlySet<string>): void {
    const end = Math.min(this.#members.length, this.#head + count);
    let write = end;
    for (let i = end - 1; i >= this.#head; i--) {
      const member = this.#members[i]!;
      if (keep.has(member)) {
        write--;
        this.#members[write] = member;
        this.#scores[write] = this.#scores[i]!;
      } else {
        this.#scoreOf.delete(member);
      }
    }
    this.#head = write;
    if (this.#head > 1024 && this.#head * 2 > this.#members.length) this.#compact();
  }

  /** Removes and returns up to `count` members from the head, in order. */
  shift(count: number): string[] {
    const end = Math.min(this.#members.length, this.#head + count);
    const popped = this.#members.slice(this.#head, end);
    for (const member of popped) this.#scoreOf.delete(member);
    this.#head = end;
    if (this.#head > 1024 && this.#head * 2 > this.#members.length) this.#compact();
    return popped;
  }

  remove(member: string): boolean {
    const score = this.#scoreOf.get(member);
    if (score === undefined) return false;
    const i = this.#indexOf(score, member);
    this.#members.splice(i, 1);
    this.#scores.splice(i, 1);
    this.#scoreOf.delete(member);
    return true;
  }

  /** The first index whose (score, member) is not below the given one. */
  #indexOf(score: number, member: string): number {
    let lo = this.#head;
    let hi = this.#scores.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.#scores[mid]!;
      if (s < score || (s === score && compareIds(this.#members[mid]!, member) < 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #compact(): void {
    this.#members = this.#members.slice(this.#head);
    this.#scores = this.#scores.slice(this.#head);
    this.#head = 0;
  }
}

/** Redis orders equal scores by the members' bytes. */
function compareIds(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}
