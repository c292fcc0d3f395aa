// Group commit: calls of one kind for one queue that reach the store in the same turn
// of the event loop share one script call, so a flash crowd is not capped by one
// EVALSHA round trip per request. Each caller still gets its own result or error.

/** What one batch call answers for each item: its result, or the error for that caller alone. */
export type BatchReply<O> = ReadonlyArray<O | Error>;

/** Sends one batch of items of one queue; answers one entry per item, in order. */
export type SendBatch<I, O> = (queue: string, items: readonly I[]) => Promise<BatchReply<O>>;

interface Waiter<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/** One queue's state: the batch being gathered in this turn, and how many calls are out. */
interface Lane<I, O> {
  gathering: Array<Waiter<I, O>> | null;
  inFlight: number;
}

/**
 * Batches the calls of one operation per queue.
 *
 * A call made while no call of its kind for its queue is in flight or gathering is
 * sent at once, alone: a lone caller waits no longer than without group commit, and
 * no timer is ever on the path. A call made while one is in flight joins the batch
 * gathered in this turn of the event loop, sent by `setImmediate` (after this turn's
 * I/O callbacks, so every request that arrived in the turn is in it), or at once when
 * it reaches `maxBatchSize`, or half of it while at most one call is out (so Redis
 * runs one batch while this process prepares the next). A batch that fails as a whole (connection lost, the
 * queue's state lost) rejects every caller in it with that error; an item's own error
 * rejects that caller only. With `maxBatchSize` 1 every call is sent alone, at once.
 */
export class GroupCommit<I, O> {
  readonly #send: SendBatch<I, O>;
  readonly #maxBatchSize: number;
  readonly #lanes = new Map<string, Lane<I, O>>();

  constructor(send: SendBatch<I, O>, maxBatchSize: number) {
    this.#send = send;
    this.#maxBatchSize = maxBatchSize;
  }

  run(queue: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const waiter: Waiter<I, O> = { item, resolve, reject };
      let lane = this.#lanes.get(queue);
      if (!lane) this.#lanes.set(queue, (lane = { gathering: null, inFlight: 0 }));
      if (this.#maxBatchSize === 1 || (lane.inFlight === 0 && lane.gathering === null)) {
        this.#dispatch(queue, lane, [waiter]);
        return;
      }
      if (lane.gathering === null) {
        const batch: Array<Waiter<I, O>> = [];
        lane.gathering = batch;
        setImmediate(() => {
          if (lane.gathering === batch) {
            lane.gathering = null;
            this.#dispatch(queue, lane, batch);
          }
        });
      }
      lane.gathering.push(waiter);
      // Full, or half full while at most one call is out: sending it now lets Redis run
      // it while this process gathers and prepares the next (at moderate concurrency a
      // wave of calls then goes as two or three overlapping calls, not one).
      if (lane.gathering.length >= this.#maxBatchSize || (lane.inFlight <= 1 && lane.gathering.length >= this.#maxBatchSize / 2)) {
        const full = lane.gathering;
        lane.gathering = null;
        this.#dispatch(queue, lane, full);
      }
    });
  }

  #dispatch(queue: string, lane: Lane<I, O>, batch: Array<Waiter<I, O>>): void {
    lane.inFlight++;
    let sent: Promise<BatchReply<O>>;
    try {
      sent = this.#send(
        queue,
        batch.map((w) => w.item),
      );
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(
      (replies) => {
        this.#done(queue, lane);
        batch.forEach((waiter, i) => {
          const reply = replies[i];
          if (reply instanceof Error) waiter.reject(reply);
          else if (i >= replies.length) waiter.reject(new Error(`the store answered ${replies.length} of a batch of ${batch.length}`));
          else waiter.resolve(reply as O);
        });
      },
      (error: unknown) => {
        this.#done(queue, lane);
        for (const waiter of batch) waiter.reject(error);
      },
    );
  }

  /** One call answered: forget an idle queue, so many short-lived queues leave nothing behind. */
  #done(queue: string, lane: Lane<I, O>): void {
    lane.inFlight--;
    if (lane.inFlight === 0 && lane.gathering === null) this.#lanes.delete(queue);
  }
}
