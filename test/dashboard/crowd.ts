// A simulated crowd on a queue, in process: members arrive at a rate that rises and falls,
// the admitter lets them in, and most admitted members order (claim + consume) after a
// moment while the rest let their tokens expire. Gives the dashboard's charts something to draw.

import type { WaitingQueue } from '../../src/index.js';

export interface Crowd {
  /** Members who entered so far. */
  readonly entered: number;
  stop(): Promise<void>;
}

/**
 * Starts the crowd. `arrivals(seconds)` is the arrival rate (members per second) at
 * `seconds` since the start; `orderShare` the share of admitted members who order.
 */
export function startCrowd(queue: WaitingQueue, options: { arrivals: (seconds: number) => number; orderShare?: number; tickMs?: number }): Crowd {
  const started = Date.now();
  const tickMs = options.tickMs ?? 100;
  const orderShare = options.orderShare ?? 0.75;
  let entered = 0;
  let owed = 0;
  let stopped = false;
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    const tracked = p.catch(() => undefined).finally(() => pending.delete(tracked));
    pending.add(tracked);
  };
  const timers = new Set<NodeJS.Timeout>();

  const order = async (memberId: string) => {
    const token = await queue.token(memberId);
    if (!token) return;
    const claim = await queue.claim(memberId, token.entryToken);
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 1500)); // the order is being placed
    await queue.consume(claim);
  };
  const onAdmitted = (members: Array<{ memberId: string }>) => {
    for (const { memberId } of members) {
      if (Math.random() >= orderShare) continue; // never comes back: the token expires
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          if (!stopped) track(order(memberId));
        },
        300 + Math.random() * 2500,
      );
      timers.add(timer);
    }
  };
  queue.on('admitted', onAdmitted);

  const arrivals = setInterval(() => {
    owed += (options.arrivals((Date.now() - started) / 1000) * tickMs) / 1000;
    while (owed >= 1) {
      owed -= 1;
      entered += 1;
      track(queue.enter(`shopper-${entered}`));
    }
  }, tickMs);
  const admitter = queue.startAdmitter({ intervalMs: 200 });

  return {
    get entered() {
      return entered;
    },
    async stop() {
      stopped = true;
      clearInterval(arrivals);
      for (const timer of timers) clearTimeout(timer);
      queue.off('admitted', onAdmitted);
      await admitter.stop();
      await Promise.all(pending);
    },
  };
}
