// WaitingQueue around any Store: bounded calls, error mapping, the admitter, events.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, StoreUnavailableError, WaitingQueue, type AdmitRequest, type RecoveryNotice, type Store, type StoreWarning } from '../src/index.js';
import { sleep } from './support/unique.js';
import { storeWith } from './support/store-with.js';

/** A store whose every method hangs until released, or fails, as a test wants. */
function brokenStore(behaviour: 'hang' | 'throw' | 'reject'): Store {
  const fail = () => {
    if (behaviour === 'throw') throw new Error('connection refused');
    if (behaviour === 'reject') return Promise.reject(new Error('ECONNRESET'));
    return new Promise<never>(() => undefined);
  };
  return { enter: fail, position: fail, admit: fail, claim: fail, consume: fail, release: fail, leave: fail, stats: fail };
}

afterEach(() => vi.restoreAllMocks());

describe('store calls', () => {
  it('fail with StoreUnavailableError within operationTimeoutMs when the store hangs', async () => {
    const queue = new WaitingQueue({ store: brokenStore('hang'), operationTimeoutMs: 50 });
    for (const call of [() => queue.enter('a'), () => queue.position('a'), () => queue.admit(), () => queue.leave('a'), () => queue.stats()]) {
      const started = Date.now();
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).code).toBe('STORE_UNAVAILABLE');
      expect(Date.now() - started).toBeLessThan(50 + 500);
    }
  });

  it.each(['throw', 'reject'] as const)('turn a store that fails (%s) into StoreUnavailableError with the cause', async (behaviour) => {
    const queue = new WaitingQueue({ store: brokenStore(behaviour) });
    const error = (await queue.enter('a').catch((e: unknown) => e)) as StoreUnavailableError;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('never reach the store for a claim without a well-formed token', async () => {
    const store = brokenStore('hang');
    const claim = vi.spyOn(store, 'claim');
    const queue = new WaitingQueue({ store });
    await expect(queue.claim('a', '')).rejects.toMatchObject({ code: 'MISSING' });
    await expect(queue.claim('a', 'not a token')).rejects.toMatchObject({ code: 'INVALID' });
    await expect(queue.claim('a', 42 as never)).rejects.toMatchObject({ code: 'INVALID' });
    expect(claim).not.toHaveBeenCalled();
  });

  it('answer false without the store for a claim we never issued', async () => {
    const store = brokenStore('hang');
    const queue = new WaitingQueue({ store });
    const forged = { memberId: 'a', claimId: 'nope', tokenId: 'x', expiresAt: 0 };
    expect(await queue.consume(forged)).toBe(false);
    expect(await queue.release(forged)).toBe(false);
    expect(await queue.consume(null as never)).toBe(false);
  });
});

describe('admitter', () => {
  it('admits on its timer and stop() waits for the call in flight', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore(), admitRatePerSecond: 1000, admitBurst: 2 });
    for (let i = 0; i < 6; i++) await queue.enter(`m${i}`);
    const admitted: string[] = [];
    queue.on('admitted', (members) => admitted.push(...members.map((m) => m.memberId)));
    const admitter = queue.startAdmitter({ intervalMs: 10 });
    await vi.waitFor(() => expect(admitted).toHaveLength(6), { timeout: 2000 });
    await admitter.stop();
    expect(admitted).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
  });

  it('emits the first store error of an incident, keeps running, and reports the recovery', async () => {
    let failures = 5;
    const memory = new MemoryStore();
    const store = storeWith(memory, {
      admit: (queue: string, request: AdmitRequest) => (failures-- > 0 ? Promise.reject(new Error('boom')) : memory.admit(queue, request)),
    });
    const queue = new WaitingQueue({ store });
    await queue.enter('alice');
    const errors: Error[] = [];
    queue.on('error', (e) => errors.push(e));
    const recoveries: RecoveryNotice[] = [];
    queue.on('recovered', (notice) => recoveries.push(notice));
    const admitted = new Promise((resolve) => queue.once('admitted', resolve));
    const admitter = queue.startAdmitter({ intervalMs: 5 });
    await admitted;
    await admitter.stop();
    // One incident, one error (not one per tick), then one recovery notice.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
    expect(recoveries).toEqual([{ source: 'admitter', failedCalls: 5, durationMs: expect.any(Number) }]);
  });

  it('turns errors into a process warning, never a crash, when nobody listens', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const queue = new WaitingQueue({ store: brokenStore('reject') });
    const admitter = queue.startAdmitter({ intervalMs: 5 });
    await vi.waitFor(() => expect(warn).toHaveBeenCalled(), { timeout: 2000 });
    await admitter.stop();
    expect(String(warn.mock.calls[0]![0])).toMatch(/^waitgate: /);
  });

  it('stops cleanly before its first call', async () => {
    const store = brokenStore('hang');
    const admit = vi.spyOn(store, 'admit');
    const queue = new WaitingQueue({ store, operationTimeoutMs: 20 });
    const errors: Error[] = [];
    queue.on('error', (e) => errors.push(e));
    await queue.startAdmitter({ intervalMs: 5 }).stop();
    await sleep(60); // past the first tick (0 ms) and several intervals: the timer is gone, not merely late
    expect(admit).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
  });
});

describe('store warnings', () => {
  it('are emitted once per queue as warning events', async () => {
    const memory = new MemoryStore();
    let checks = 0;
    const store = storeWith(memory, { warnings: async () => (checks++, [{ code: 'TEST', message: 'check your store' }]) });
    const queue = new WaitingQueue({ store });
    const warnings: StoreWarning[] = [];
    queue.on('warning', (w) => warnings.push(w));
    await queue.enter('a');
    await queue.position('a');
    await sleep(10);
    expect(warnings).toEqual([{ code: 'TEST', message: 'check your store' }]);
    expect(checks).toBe(1);
  });
});

describe('admit() work', () => {
  /** A MemoryStore that records how many fresh tokens each admission step was sent. */
  function countingStore() {
    const memory = new MemoryStore();
    const sent: number[] = [];
    const store = storeWith(memory, { admit: (queue: string, request: AdmitRequest) => (sent.push(request.tokens.length), memory.admit(queue, request)) });
    return { store, sent };
  }

  it('makes a handful of tokens on an empty queue, not admitBurst', async () => {
    const { store, sent } = countingStore();
    const queue = new WaitingQueue({ store, admitRatePerSecond: 10_000, admitBurst: 10_000 });
    for (let i = 0; i < 5; i++) expect(await queue.admit()).toEqual([]);
    expect(sent).toHaveLength(5);
    expect(Math.max(...sent)).toBeLessThanOrEqual(16);
  });

  it('still admits a whole burst in one admit() when that many wait, and about as many tokens as admitted', async () => {
    const { store, sent } = countingStore();
    const queue = new WaitingQueue({ store, admitRatePerSecond: 10_000, admitBurst: 10_000 });
    for (let i = 0; i < 12_000; i++) await queue.enter(`m${i}`);
    const admitted = await queue.admit();
    expect(admitted).toHaveLength(10_000);
    expect(admitted.map((a) => a.memberId).slice(0, 3)).toEqual(['m0', 'm1', 'm2']);
    expect(new Set(admitted.map((a) => a.entryToken)).size).toBe(10_000);
    expect(sent.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000 + 16);
    expect(sent.length).toBeLessThanOrEqual(2);
  });
});

describe('admit() when its second step fails', () => {
  it('returns and announces the members the first step admitted, and reports the failure', async () => {
    const memory = new MemoryStore();
    let calls = 0;
    const store = storeWith(memory, {
      admit: (queue: string, request: AdmitRequest) => (++calls === 2 ? Promise.reject(new Error('connection reset')) : memory.admit(queue, request)),
    });
    const queue = new WaitingQueue({ store, admitRatePerSecond: 100, admitBurst: 100 });
    for (let i = 0; i < 40; i++) await queue.enter(`m${i}`);
    const errors: Error[] = [];
    queue.on('error', (e) => errors.push(e));
    const announced: string[] = [];
    queue.on('admitted', (ms) => announced.push(...ms.map((m) => m.memberId)));
    const admitted = await queue.admit(); // the first step sends 16 tokens; the second, for the other 24, fails
    expect(admitted).toHaveLength(16);
    expect(announced).toEqual(admitted.map((a) => a.memberId));
    expect(errors).toHaveLength(1);
  });
});
