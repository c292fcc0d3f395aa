import { describe, expect, it } from 'vitest';
import { Presence, type PresenceBatch } from '../src/presence.js';

/** A Presence whose flushes are kept, flushed by hand. */
function recorder(resendAfterMs: number) {
  const batches: PresenceBatch[] = [];
  const presence = new Presence(async (batch) => {
    batches.push(batch);
  }, resendAfterMs);
  const sent = () => batches.flatMap((b) => b.seen);
  return { presence, batches, sent };
}

describe('Presence: signs of life sent again only after resendAfterMs', () => {
  it('sends a polling member once per resendAfterMs of store time, not once per poll', async () => {
    const { presence, sent } = recorder(75_000);
    // Polls every 5 s for 160 s (store clock).
    for (let t = 0; t <= 160_000; t += 5000) {
      presence.note('alice', 'seen', t);
      await presence.flush();
    }
    expect(sent()).toEqual(['alice', 'alice', 'alice']); // at 0, 75 s and 150 s
  });

  it('with 0 (the hold at the head on) sends it at every flush', async () => {
    const { presence, sent } = recorder(0);
    for (let t = 0; t < 20_000; t += 5000) {
      presence.note('alice', 'seen', t);
      await presence.flush();
    }
    expect(sent()).toHaveLength(4);
  });

  it('never skips a READY answer (a pick-up), and sends each member on its own schedule', async () => {
    const { presence, batches } = recorder(10_000);
    /** What was sent since the last call (a note can flush by itself: at most once a second of store time). */
    let from = 0;
    const since = async () => {
      await presence.flush();
      const sent = batches.slice(from);
      from = batches.length;
      return { seen: sent.flatMap((b) => b.seen).sort(), pickedUp: sent.flatMap((b) => b.pickedUp) };
    };
    presence.note('alice', 'seen', 0);
    presence.note('bob', 'seen', 6000);
    presence.note('alice', 'pickedUp', 6000);
    expect(await since()).toEqual({ seen: ['alice', 'bob'], pickedUp: ['alice'] });
    presence.note('alice', 'seen', 9000); // 9 s after its last: skipped
    presence.note('bob', 'seen', 12_000); // 6 s after its last: skipped
    presence.note('alice', 'pickedUp', 12_000);
    expect(await since()).toEqual({ seen: [], pickedUp: ['alice'] });
    presence.note('alice', 'seen', 10_000); // from an older snapshot: the latest store time (12 s) counts
    presence.note('bob', 'seen', 16_000);
    expect(await since()).toEqual({ seen: ['alice', 'bob'], pickedUp: [] });
  });
});
