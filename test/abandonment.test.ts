// Abandonment on MemoryStore's clock: what only a long, exact timeline shows.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../src/index.js';

describe('dropping the dead never outruns the living', () => {
  it('a crowd of dead members ahead is dropped at a bounded pace, so live members behind it are seen before their turn', async () => {
    let now = 1_700_000_000_000;
    const store = new MemoryStore({ now: () => now });
    const options = { store, name: 'crowd', admitRatePerSecond: 5, admitBurst: 5, pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 15 } as const;
    // Several instances admit, as every app instance runs an admitter.
    const instances = [new WaitingQueue(options), new WaitingQueue(options), new WaitingQueue(options)];
    const [first] = instances;
    const dead = Array.from({ length: 1500 }, (_, i) => `dead${i}`);
    const live = Array.from({ length: 50 }, (_, i) => `live${i}`);
    for (const m of [...dead, ...live]) await first!.enter(m);
    const dropped = new Set<string>();
    const admitted: string[] = [];
    for (const q of instances) q.on('abandoned', (ms) => ms.forEach((x) => dropped.add(x.memberId)));
    now += 16_000; // the dead went silent long ago (the live ones were too far back to be tracked yet)
    for (let second = 0; second < 120 && admitted.length < live.length; second++) {
      now += 1000;
      for (const m of live) if (!admitted.includes(m)) await instances[second % 3]!.position(m); // they poll every second
      for (const q of instances) admitted.push(...(await q.admit()).map((a) => a.memberId));
    }
    expect(live.filter((m) => dropped.has(m))).toEqual([]);
    expect(admitted.sort()).toEqual([...live].sort());
    expect(dropped.size).toBe(dead.length);
  });
});

describe('hold at the head (holdSilentAfterSeconds), on the store', () => {
  it('decides in line order: the held keep their places (and their seen entry), the dead are dropped, the live admitted past both', async () => {
    let now = 1_700_000_000_000;
    const store = new MemoryStore({ now: () => now });
    const line = ['held1', 'dead1', 'live1', 'held2', 'live2', 'live3'];
    for (const m of line) await store.enter('q', m, { presenceHead: 100 });
    now += 10_000; // silent 10 s: held (> 3 s, not > 15 s), unless seen since
    await store.touch('q', { seen: ['live1', 'live2', 'live3'], pickedUp: [] });
    await store.leave('q', 'dead1');
    await store.enter('q', 'dead1', { presenceHead: 0 }); // at the back, never seen near the head
    const request = {
      ratePerSecond: 10,
      burst: 10,
      maxActive: null,
      tokenTtlMs: 60_000,
      windowMs: 10_000,
      tokens: ['t1', 't2'],
      abandonAfterMs: 15_000,
      holdSilentAfterMs: 3_000,
    };
    const first = await store.admit('q', { ...request, admitId: 'a1' });
    expect(first.admitted.map((a) => a.memberId)).toEqual(['live1', 'live2']);
    expect(first.held).toBe(2);
    expect(first.abandoned).toEqual([]);
    const second = await store.admit('q', { ...request, admitId: 'a2', tokens: ['t3', 't4'] });
    // live3, then dead1 (no seen entry: dropped, as abandonment does), past the two held.
    expect(second.admitted.map((a) => a.memberId)).toEqual(['live3']);
    expect(second.abandoned).toEqual(['dead1']);
    expect(second.held).toBe(2);
    expect((await store.inspect('q', 'held1')).rank).toBe(0);
    expect((await store.inspect('q', 'held2')).rank).toBe(1);
    expect((await store.inspect('q', 'held1')).lastSeenAt).toBe(now - 10_000);
    // held2 comes back: the next step admits it first (held1 still held).
    await store.touch('q', { seen: ['held2'], pickedUp: [] });
    const third = await store.admit('q', { ...request, admitId: 'a3', tokens: ['t5'] });
    expect(third.admitted.map((a) => a.memberId)).toEqual(['held2']);
    expect(third.held).toBe(1);
    // Without holdSilentAfterMs, held1 (silent 10 s < 15 s) is admitted as before.
    const fourth = await store.admit('q', { ...request, admitId: 'a4', tokens: ['t6'], holdSilentAfterMs: null });
    expect(fourth.admitted.map((a) => a.memberId)).toEqual(['held1']);
    expect(fourth.held).toBe(0);
    expect((await store.stats('q')).waiting).toBe(0);
  });
});
