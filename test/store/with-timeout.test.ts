// Every store call is bounded: an answer within operationTimeoutMs or StoreUnavailableError,
// whatever the mix of fast, slow and failing calls in flight at once, and nothing left to
// hold the process once they settled.

import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import { withTimeout } from '../../src/store/with-timeout.js';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('withTimeout', () => {
  it('answers what the store answers, and wraps a store failure as StoreUnavailableError with its cause', async () => {
    await expect(withTimeout('enter', 200, () => Promise.resolve(7))).resolves.toBe(7);
    const cause = new Error('ECONNREFUSED');
    const failed = withTimeout('enter', 200, () => Promise.reject(cause));
    await expect(failed).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(failed).rejects.toMatchObject({ cause });
    await expect(withTimeout('enter', 200, () => { throw cause; })).rejects.toMatchObject({ cause }); // prettier-ignore
  });

  it('times out each slow call at its own deadline while the calls around it answer', async () => {
    const started = performance.now();
    const calls = Array.from({ length: 300 }, (_, i) => {
      const slow = i % 3 === 0;
      return withTimeout('position', 60, () => after(slow ? 400 : (i % 50) + 1, i)).then(
        (value) => ({ i, value, ms: performance.now() - started }),
        (error: unknown) => ({ i, error, ms: performance.now() - started }),
      );
    });
    const results = await Promise.all(calls);
    for (const r of results) {
      if (r.i % 3 === 0) {
        expect(r, `call ${r.i}`).toHaveProperty('error');
        expect((r as { error: Error }).error).toBeInstanceOf(StoreUnavailableError);
        expect((r as { error: Error }).error.message).toMatch(/did not answer position within 60 ms/);
        expect(r.ms).toBeGreaterThanOrEqual(59);
        expect(r.ms).toBeLessThan(400); // not when the answer came
      } else expect(r, `call ${r.i}`).toMatchObject({ value: r.i });
    }
  });

  it('calls started later time out later (a queue of deadlines, not one cut-off for all)', async () => {
    const never = () => new Promise<never>(() => {});
    const first = withTimeout('enter', 80, never).catch(() => performance.now());
    await after(50, null);
    const second = withTimeout('enter', 80, never).catch(() => performance.now());
    const [a, b] = await Promise.all([first, second]);
    expect(b - a).toBeGreaterThan(30);
  });

  it('leaves no timer behind once every call has settled', async () => {
    const before = timers();
    await Promise.all(Array.from({ length: 50 }, (_, i) => withTimeout('enter', 5000, () => after(i % 5, i))));
    expect(timers()).toBe(before);
  });
});
