// Group commit: calls of one kind for one queue that reach the store in the same turn
// of the event loop share one script call, so a flash crowd is not capped by one
// EVALSHA round trip per request. Each caller still gets its own result or error.

/** What one batch call answers for each item: its result, or the error for that caller alone. */
export type BatchReply<O> = ReadonlyArray<O | Error>;

/** Sends one batch of items of one queue; answers one entry per item, in order. */
export type SendBatch<I, O> = (queue: string, items: readonly I[]) => Promise<BatchReply<O>>;

/**
 * While no call is out, a batch is sent once it holds this many calls (or half of
 * maxBatchSize, if fewer), so Redis starts on it while this process gathers the rest.
 */
export const EARLY_BATCH = 32;

interface Waiter<O> {
  resolve(value: O): void;
  reject(error: unknown): void;
}

/** A batch being gathered: the items as the sender takes them, and their callers, in the same order. */
interface Batch<I, O> {
  items: I[];
  waiters: Array<Waiter<O>>;
}

/**
 * One queue's state: the batch being gathered in this turn, how many calls are out, and
 * whether a call was answered in this turn (its callers may call again before it ends).
 */
interface Lane<I, O> {
  gathering: Batch<I, O> | null;
  inFlight: number;
  answered: boolean;
}

/**
 * Batches the calls of one operation per queue.
 *
 * A call made while no call of its kind for its queue is in flight or gathering, and none
 * was answered in this turn of the event loop, is sent at once, alone: a lone caller waits
 * no longer than without group commit, and no timer is ever on the path. A call made
 * while one is in flight joins the batch gathered in this turn, sent by `setImmediate`
 * (after this turn's I/O callbacks, so every request that arrived in the turn is in it),
 * or at once when it reaches `maxBatchSize`, or {@link EARLY_BATCH} calls (half of
 * `maxBatchSize` if fewer) while no call is out (so Redis starts on it while this process
 * gathers the rest). So are the calls made in the turn
 * a call was answered in, even if nothing is out any more: under a crowd the callers of
 * the answered batches come back together, and the first of them alone would cost a
 * whole script call. A batch that fails as a whole (connection lost, the queue's state
 * lost) rejects every caller in it with that error; an item's own error rejects that
 * caller only. With `maxBatchSize` 1 every call is sent alone, at once.
 */
export class GroupCommit<I, O> {
  readonly #send: SendBatch<I, O>;
  readonly #maxBatchSize: number;
  /** A batch this full is sent at once while no call is out: half of maxBatchSize, at most EARLY_BATCH. */
  readonly #early: number;
  readonly #lanes = new Map<string, Lane<I, O>>();

  constructor(send: SendBatch<I, O>, maxBatchSize: number) {
    this.#send = send;
    this.#maxBatchSize = maxBatchSize;
    this.#early = Math.min(maxBatchSize / 2, EARLY_BATCH);
  }

  run(queue: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let lane = this.#lanes.get(queue);
      if (!lane) this.#lanes.set(queue, (lane = { gathering: null, inFlight: 0, answered: false }));
      if (this.#maxBatchSize === 1 || (lane.inFlight === 0 && lane.gathering === null && !lane.answered)) {
        this.#dispatch(queue, lane, { items: [item], waiters: [{ resolve, reject }] });
        return;
      }
      let batch = lane.gathering;
      if (batch === null) {
        const gathered: Batch<I, O> = (batch = lane.gathering = { items: [], waiters: [] });
        setImmediate(() => {
          if (lane.gathering === gathered) {
            lane.gathering = null;
            this.#dispatch(queue, lane, gathered);
          }
        });
      }
      batch.items.push(item);
      batch.waiters.push({ resolve, reject });
      // Full, or EARLY_BATCH while nothing is out: sending it now lets Redis run it while this
      // process gathers and prepares the next.
      const size = batch.items.length;
      if (size >= this.#maxBatchSize || (lane.inFlight === 0 && size >= this.#early)) {
        lane.gathering = null;
        this.#dispatch(queue, lane, batch);
      }
    });
  }

  #dispatch(queue: string, lane: Lane<I, O>, batch: Batch<I, O>): void {
    lane.inFlight++;
    let sent: Promise<BatchReply<O>>;
    try {
      sent = this.#send(queue, batch.items);
    } catch (error) {
      sent = Promise.reject(error);
    }
    const { waiters } = batch;
    sent.then(
      (replies) => {
        this.#done(queue, lane);
        for (let i = 0; i < waiters.length; i++) {
          const reply = replies[i];
          if (reply instanceof Error) waiters[i]!.reject(reply);
          else if (i >= replies.length) waiters[i]!.reject(new Error(`the store answered ${replies.length} of a batch of ${waiters.length}`));
          else waiters[i]!.resolve(reply as O);
        }
      },
      (error: unknown) => {
        this.#done(queue, lane);
        for (const waiter of waiters) waiter.reject(error);
      },
    );
  }

  /**
   * One call answered: its callers may call again in this turn (they gather, see run);
   * at the end of the turn an idle queue is forgotten, so many short-lived queues leave
   * nothing behind.
   */
  #done(queue: string, lane: Lane<I, O>): void {
    lane.inFlight--;
    if (lane.answered) return;
    lane.answered = true;
    setImmediate(() => {
      lane.answered = false;
      if (lane.inFlight === 0 && lane.gathering === null && this.#lanes.get(queue) === lane) this.#lanes.delete(queue);
    });
  }
}
