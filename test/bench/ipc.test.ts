// The simulation's child processes end by sending their (large) result: it must reach the
// parent even when the parent is slow to read it (issue 23 item 10: `npm run simulate`
// failed with "bench/sim/shop.mjs exited (0) before "result"").
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messageOf } from '../../bench/lib/ipc.mjs';

const child = join(import.meta.dirname, 'fixtures', 'big-result-child.mjs');

describe('bench IPC: a child´s last message', () => {
  it('reaches a parent busy while the child sends and exits', { timeout: 30_000 }, async () => {
    for (let run = 0; run < 3; run++) {
      const c = fork(child, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const result = messageOf(c, 'result');
      const until = Date.now() + 300; // the parent is busy (as the orchestrator under load): the pipe fills
      while (Date.now() < until);
      const m = (await result) as { ids: string[] };
      expect(m.ids).toHaveLength(200_000);
      expect(m.ids.at(-1)).toBe('s199999');
    }
  });

  it('rejects, naming the child, when the child exits without the message', async () => {
    const c = fork(child, { env: { ...process.env, IDS: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await expect(messageOf(c, 'never')).rejects.toThrow(/big-result-child\.mjs exited \(0\) before "never"/);
  });
});
