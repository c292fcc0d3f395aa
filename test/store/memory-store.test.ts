// MemoryStore: the shared contract on an injected clock, plus what only a fake clock can show exactly.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue } from '../../src/index.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeAdaptiveContract } from '../contract/adaptive-contract.js';
import { describeAlwaysOnContract } from '../contract/always-on-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeCohortContract } from '../contract/cohort-contract.js';
import { describeRevokeContract } from '../contract/revoke-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeIdentityContract } from '../contract/identity-contract.js';
import { describeStockContract } from '../contract/stock-contract.js';
import { describeLanesContract } from '../contract/lanes-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { signingWith } from '../support/signing-keys.js';
import { describeTruthContract } from '../contract/truth-contract.js';

/** Real time plus a jump that tests control: `elapse` moves the store's clock without sleeping. */
function fakeClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, elapse: async (ms: number) => void (offset += ms) };
}

describeStoreContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

// The same contract with signed passes for tokens (SPEC §15): claim, consume, release and expiry
// by the pass's jti behave as with opaque tokens.
describeStoreContract('MemoryStore, signed passes', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
  queueOptions: { signing: signingWith() },
});

describeControlsContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeCohortContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeStockContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeLanesContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeAlwaysOnContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeAbandonmentContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeFiguresContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeTruthContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeAdaptiveContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describe('MemoryStore on a frozen clock', () => {
  function frozen() {
    let now = 1_700_000_000_000;
    const store = new MemoryStore({ now: () => now });
    return { store, advance: (ms: number) => void (now += ms) };
  }

  it('refills the bucket exactly at the configured rate', async () => {
    const { store, advance } = frozen();
    const queue = new WaitingQueue({ store, admitRatePerSecond: 50 });
    for (let i = 0; i < 200; i++) await queue.enter(`m${i}`);
    expect(await queue.admit()).toHaveLength(50);
    expect(await queue.admit()).toHaveLength(0);
    advance(100);
    expect(await queue.admit()).toHaveLength(5);
    advance(10_000);
    expect(await queue.admit()).toHaveLength(50); // capped at the burst
  });

  it('refills nothing when the clock steps back', async () => {
    const { store, advance } = frozen();
    const queue = new WaitingQueue({ store, admitRatePerSecond: 10 });
    for (let i = 0; i < 50; i++) await queue.enter(`m${i}`);
    expect(await queue.admit()).toHaveLength(10);
    advance(-60_000);
    expect(await queue.admit()).toHaveLength(0);
    advance(60_500);
    expect(await queue.admit()).toHaveLength(5);
  });

  it('expires a token exactly at its TTL', async () => {
    const { store, advance } = frozen();
    const queue = new WaitingQueue({ store, entryTokenTtlSeconds: 300 });
    await queue.enter('alice');
    await queue.admit();
    advance(299_999);
    expect(await queue.state('alice')).toBe('READY');
    advance(1);
    expect(await queue.state('alice')).toBe('NOT_ENTERED');
  });

  it('rejects unknown options', () => {
    expect(() => new MemoryStore({ clock: Date.now } as never)).toThrow(WaitgateConfigError);
    expect(() => new MemoryStore({ now: 5 } as never)).toThrow(/now/);
  });
});

describeRevokeContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});

describeIdentityContract('MemoryStore', {
  async create() {
    const clock = fakeClock();
    return { store: new MemoryStore({ now: clock.now }), elapse: clock.elapse };
  },
});
