// waitgate quickstart on the in-memory store: enter, admit, claim, order, consume / release.
// Run with `npm run example:quickstart` (it builds dist/ first; `waitgate` resolves to this package).

import { MemoryStore, WaitingQueue } from 'waitgate';
import { walkThrough } from './quickstart-walkthrough.mjs';

const queue = new WaitingQueue({
  store: new MemoryStore(),
  name: 'orders',
  admitRatePerSecond: 2, // slow on purpose, so the queue is visible
  entryTokenTtlSeconds: 300,
  claimTtlSeconds: 30,
});
queue.on('admitted', (members) => console.log(`  [event admitted] ${members.map((m) => m.memberId).join(', ')}`));
queue.on('error', (error) => console.error(`  [event error] ${error.message}`));

await walkThrough(queue);
