// Demo mode: simulated shoppers who queue ahead of you, order once admitted, and sometimes give up.

import { placeOrder } from './db.mjs';

/** Keeps about `count` simulated shoppers in the queue; returns { stop }. */
export function startSimulatedShoppers({ queue, db, count }) {
  let next = 0;
  const waiting = new Set();
  const tick = async () => {
    try {
      while (waiting.size < count) {
        const id = `bot-${++next}`;
        waiting.add(id);
        await queue.enter(id);
      }
      for (const id of [...waiting]) {
        const token = await queue.token(id);
        if (!token) {
          if (Math.random() < 0.02) {
            // gave up
            await queue.leave(id);
            waiting.delete(id);
          }
          continue;
        }
        waiting.delete(id);
        const claim = await queue.claim(id, token.entryToken);
        try {
          placeOrder(db, { memberId: id, productId: 1 + (next % 3), tokenId: claim.tokenId });
          await queue.consume(claim);
        } catch {
          await queue.release(claim);
        }
      }
    } catch (error) {
      console.error('[demo shoppers]', error.message);
    }
  };
  const timer = setInterval(tick, 1500);
  void tick();
  return { stop: () => clearInterval(timer) };
}
