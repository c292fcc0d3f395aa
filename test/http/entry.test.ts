// The entry the guards hand to order handlers: settling under store failures.

import { describe, expect, it } from 'vitest';
import { orderFailed } from '../../src/http/core.js';
import { createEntry } from '../../src/http/entry.js';
import { MemoryStore, QueueStateLostError, StoreUnavailableError, WaitingQueue, type Store } from '../../src/index.js';
import { storeWith } from '../support/store-with.js';

/** A queue whose consume and release fail as `fail` says, and the errors it reports. */
async function claimedEntry(fail: () => Error | null) {
  const memory = new MemoryStore();
  // consume and release fail as `fail` says, else run on the real store.
  const failing =
    (settle: Store['consume']) =>
    (...args: Parameters<Store['consume']>) => {
      const error = fail();
      return error ? Promise.reject(error) : settle(...args);
    };
  const store = storeWith(memory, { consume: failing(memory.consume.bind(memory)), release: failing(memory.release.bind(memory)) });
  const queue = new WaitingQueue({ store });
  const errors: Error[] = [];
  queue.on('error', (e) => errors.push(e));
  await queue.enter('alice');
  const [admission] = await queue.admit();
  const claim = await queue.claim('alice', admission!.entryToken);
  return { queue, errors, entry: createEntry(queue, claim, [5, 5, 5]) };
}

describe('entry settling', () => {
  it('reports one error and the outcome unknown when every background retry fails', async () => {
    const { entry, errors } = await claimedEntry(() => new Error('connection refused'));
    expect(entry.state).toBe('unsettled');
    expect(await entry.consume()).toBe(false);
    expect(entry.state).toBe('retrying');
    expect(await entry.outcome()).toBe('unknown');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
    expect(errors[0]!.message).toMatch(/could not consume a claim after 3 retries/);
  });

  it('keeps the answer of a retry: a consume refused after a store failure is reported', async () => {
    let calls = 0;
    const { entry, errors, queue } = await claimedEntry(() => (calls++ === 0 ? new Error('timeout') : null));
    await queue.leave('alice'); // meanwhile the token is gone: the retried consume is refused
    expect(await entry.consume()).toBe(false);
    expect(await entry.outcome()).toBe('refused');
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/consume retried after a store failure was refused/)]);
  });

  it('does not retry when the queue state was lost (retrying cannot help): outcome unknown, reported', async () => {
    let calls = 0;
    const { entry, errors } = await claimedEntry(() => (calls++, new QueueStateLostError('default')));
    expect(await entry.release()).toBe(false);
    expect(await entry.outcome()).toBe('unknown');
    expect(calls).toBe(1);
    expect(errors[0]).toBeInstanceOf(QueueStateLostError);
  });

  it('answers the first settle: confirmed, and a later call of the other kind false', async () => {
    const { entry } = await claimedEntry(() => null);
    expect(await entry.consume()).toBe(true);
    expect(await entry.release()).toBe(false);
    expect(entry.state).toBe('confirmed');
  });
});

describe('orderFailed: which ends of an order request count as a failed order (SPEC §14)', () => {
  it.each([
    ['a 2xx', { status: 201 }, false],
    ['a 3xx', { status: 303 }, false],
    ['a 400', { status: 400 }, false],
    ['a 409', { status: 409 }, false],
    ['a 499', { status: 499 }, false],
    ['a 500', { status: 500 }, true],
    ['a 503', { status: 503 }, true],
    ['a dropped connection', { aborted: true }, true],
    ['a dropped connection after a 400 was written', { status: 400, aborted: true }, true],
    ['a thrown Error', { thrown: true, error: new Error('x') }, true],
    ['a thrown non-error', { thrown: true, error: 'x' }, true],
    ['a thrown error declaring 400 by getStatus() (Nest)', { thrown: true, error: { getStatus: () => 400 } }, false],
    ['a thrown error declaring 409 by status (Hono, http-errors)', { thrown: true, error: Object.assign(new Error('x'), { status: 409 }) }, false],
    ['a thrown error declaring 422 by statusCode (Fastify)', { thrown: true, error: { statusCode: 422 } }, false],
    ['a thrown error declaring 503', { thrown: true, error: { status: 503 } }, true],
    [
      'a thrown error whose getStatus throws',
      {
        thrown: true,
        error: {
          getStatus: () => {
            throw new Error('x');
          },
        },
      },
      true,
    ],
    ['a thrown error the framework answered with a 400', { thrown: true, error: new Error('x'), status: 400 }, false],
    ['a thrown error the framework answered with a 2xx', { thrown: true, error: new Error('x'), status: 200 }, true],
  ])('%s: %s', (_label, end, failed) => {
    expect(orderFailed(end)).toBe(failed);
  });
});

describe('entry.release options', () => {
  it('refuses a bad option with WaitgateConfigError, settling nothing', async () => {
    const { entry } = await claimedEntry(() => null);
    await expect(entry.release({ failed: 'yes' } as never)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(entry.release({ fail: true } as never)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(entry.state).toBe('unsettled');
    expect(await entry.release({ failed: false })).toBe(true);
  });
});
