// GroupCommit on its own: when a call is sent alone and at once, how calls made while
// one is in flight gather into one batch, and that each caller gets its own outcome.
// (On Redis, with both clients: test/store/redis-group-commit.test.ts.)

import { describe, expect, it } from 'vitest';
import { EARLY_BATCH, GroupCommit, type BatchReply } from '../../src/store/group-commit.js';

/** A batch sender that records each batch and answers when told to. */
function recorder() {
  const batches: Array<{ queue: string; items: readonly number[]; answer(replies: BatchReply<string>): void; fail(error: Error): void }> = [];
  const send = (queue: string, items: readonly number[]) =>
    new Promise<BatchReply<string>>((resolve, reject) => batches.push({ queue, items, answer: resolve, fail: reject }));
  return { batches, send };
}

const settle = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('sends a lone call at once, in the same synchronous step: no timer, no wait for the turn to end', () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 64);
    void group.run('q', 1);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
  });

  it('gathers the calls made while one is in flight into one batch, sent at the end of the turn', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 64);
    const first = group.run('q', 0);
    const rest = [1, 2, 3, 4].map((i) => group.run('q', i));
    expect(batches).toHaveLength(1);
    await nextTurn();
    expect(batches.map((b) => b.items)).toEqual([[0], [1, 2, 3, 4]]);
    batches[1]!.answer(['a', 'b', 'c', 'd']);
    batches[0]!.answer(['z']);
    expect(await first).toBe('z');
    expect(await Promise.all(rest)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('sends a batch as soon as it holds maxBatchSize calls, and keeps queues apart', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 4);
    for (let i = 0; i < 12; i++) void group.run('q', i);
    void group.run('other', 100);
    expect(batches.map((b) => [b.queue, b.items])).toEqual([
      ['q', [0]], // alone, at once
      ['q', [1, 2, 3, 4]], // one call out: gathered up to maxBatchSize
      ['q', [5, 6, 7, 8]],
      ['other', [100]],
    ]);
    await nextTurn();
    expect(batches.slice(4).map((b) => [b.queue, b.items])).toEqual([['q', [9, 10, 11]]]);
  });

  it('gathers the calls made in the turn a call was answered in, sent half full while none is out', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 4);
    const first = group.run('q', 0);
    batches[0]!.answer(['a']);
    expect(await first).toBe('a');
    // The answered callers come back in this turn: not the first of them alone, but together.
    for (let i = 1; i <= 5; i++) void group.run('q', i);
    expect(batches.map((b) => b.items)).toEqual([[0], [1, 2]]); // half full, nothing out: sent at once
    await nextTurn();
    expect(batches.map((b) => b.items)).toEqual([[0], [1, 2], [3, 4, 5]]);
  });

  it(`sends ${EARLY_BATCH} calls at once while none is out, however large maxBatchSize is; then gathers up to it`, async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 128);
    const first = group.run('q', 0);
    batches[0]!.answer(['a']);
    await first;
    for (let i = 1; i <= 200; i++) void group.run('q', i);
    expect(batches.map((b) => b.items.length)).toEqual([1, EARLY_BATCH, 128]);
    await nextTurn();
    expect(batches.map((b) => b.items.length)).toEqual([1, EARLY_BATCH, 128, 200 - EARLY_BATCH - 128]);
  });

  it('rejects only the caller whose own reply is an error; a batch that fails rejects each of its callers', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 64);
    const lone = settle(group.run('q', 0));
    const batch = [1, 2, 3].map((i) => settle(group.run('q', i)));
    await nextTurn();
    batches[1]!.answer(['one', new Error('bad member 2'), 'three']);
    expect(await Promise.all(batch)).toEqual([{ value: 'one' }, { error: new Error('bad member 2') }, { value: 'three' }]);
    batches[0]!.fail(new Error('connection lost'));
    expect(await lone).toEqual({ error: new Error('connection lost') });
  });

  it('with maxBatchSize 1 (group commit off) sends every call alone, at once', () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 1);
    for (let i = 0; i < 3; i++) void group.run('q', i);
    expect(batches.map((b) => b.items)).toEqual([[0], [1], [2]]);
  });

  it('sends alone again once nothing is in flight and the turn of the last answer is over, and forgets an idle queue', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 64);
    const first = group.run('q', 0);
    batches[0]!.answer(['a']);
    await first;
    await nextTurn();
    void group.run('q', 1);
    expect(batches.map((b) => b.items)).toEqual([[0], [1]]);
  });

  it('rejects a caller the store left without a reply', async () => {
    const { batches, send } = recorder();
    const group = new GroupCommit(send, 64);
    void group.run('q', 0);
    const short = [1, 2].map((i) => settle(group.run('q', i)));
    await nextTurn();
    batches[1]!.answer(['only one']);
    expect(await Promise.all(short)).toEqual([{ value: 'only one' }, { error: expect.any(Error) }]);
  });
});
