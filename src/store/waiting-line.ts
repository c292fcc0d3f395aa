// The in-memory waiting line: FIFO by entry sequence, with O(log n) rank.

/** Members ordered by strictly increasing entry sequence. Pops from the head; leaving splices. */
export class WaitingLine {
  #members: string[] = [];
  #seqs: number[] = [];
  #head = 0;
  readonly #seqOf = new Map<string, number>();

  get size(): number {
    return this.#seqOf.size;
  }

  has(member: string): boolean {
    return this.#seqOf.has(member);
  }

  /** Appends; `seq` must be above every sequence in the line. */
  push(member: string, seq: number): void {
    this.#members.push(member);
    this.#seqs.push(seq);
    this.#seqOf.set(member, seq);
  }

  /** The member's entry sequence, or null when not waiting. */
  seqOf(member: string): number | null {
    return this.#seqOf.get(member) ?? null;
  }

  /** Entry sequences of the first and the last waiting member (null when empty). */
  ends(): { head: number | null; last: number | null } {
    if (this.size === 0) return { head: null, last: null };
    return { head: this.#seqs[this.#head]!, last: this.#seqs[this.#seqs.length - 1]! };
  }

  /** Entry sequence of the member at 0-based `rank`, O(1); null when the line is shorter. */
  seqAtRank(rank: number): number | null {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) return null;
    return this.#seqs[this.#head + rank]!;
  }

  /** 0-based rank, or null when not waiting. */
  rank(member: string): number | null {
    const seq = this.#seqOf.get(member);
    return seq === undefined ? null : this.#indexOf(seq) - this.#head;
  }

  /** Removes and returns up to `count` members from the head, in order. */
  shift(count: number): string[] {
    const end = Math.min(this.#members.length, this.#head + count);
    const popped = this.#members.slice(this.#head, end);
    for (const member of popped) this.#seqOf.delete(member);
    this.#head = end;
    if (this.#head > 1024 && this.#head * 2 > this.#members.length) this.#compact();
    return popped;
  }

  remove(member: string): boolean {
    const seq = this.#seqOf.get(member);
    if (seq === undefined) return false;
    const i = this.#indexOf(seq);
    this.#members.splice(i, 1);
    this.#seqs.splice(i, 1);
    this.#seqOf.delete(member);
    return true;
  }

  #indexOf(seq: number): number {
    let lo = this.#head;
    let hi = this.#seqs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #compact(): void {
    this.#members = this.#members.slice(this.#head);
    this.#seqs = this.#seqs.slice(this.#head);
    this.#head = 0;
  }
}
