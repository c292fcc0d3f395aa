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
