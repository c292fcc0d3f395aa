// What an operator's terminal shows after `waitgate watch` redraws: rendered by a real
// terminal emulator (xterm.js, headless), so wrapping, scrolling and escape codes are the
// terminal's own, not our idea of them.

import { describe, expect, it } from 'vitest';
import { Screen } from '../../src/cli/screen.js';
import { frame, type WatchState } from '../../src/cli/watch-view.js';
import type { StatusJson } from '../../src/cli/commands.js';
import { terminal } from '../support/terminal.js';

function status(patch: { opensAt?: number | null; message?: string | null; mode?: string }): StatusJson {
  const now = Date.parse('2026-12-04T12:00:00Z');
  return {
    queue: 'drop',
    prefix: 'waitgate',
    now,
    controls: {
      mode: patch.mode ?? 'open',
      message: patch.message ?? null,
      opensAt: patch.opensAt ?? null,
      shuffle: true,
      admitRatePerSecond: 150,
      admitBurst: null,
      maxActive: null,
      unset: [],
    },
    stats: {
      waiting: 1200,
      active: 40,
      claimed: 2,
      admittedPerSecond: 149.5,
      totals: { entered: 5000, admitted: 3800, abandoned: 10, consumed: 3700, expired: 3 },
      waitSeconds: { p50: 8, p90: 12, max: 20, count: 900 },
    },
  } as unknown as StatusJson;
}

const state = (s: StatusJson): WatchState => ({ status: s, history: [1, 2, 3], error: null });

describe('waitgate watch on a terminal', () => {
  it('shows exactly the last frame after the opening removed a line and a long message wrapped', async () => {
    const cols = 60;
    const { out, visible } = terminal(cols, 24);
    out.write('$ npx waitgate watch --queue drop\r\n'); // the prompt the command started under
    const screen = new Screen(out);
    const style = { color: false, columns: cols };
    const before = Date.parse('2026-12-04T12:00:30Z');
    // Before the opening: the countdown line, and a message in wide characters (two columns each).
    screen.draw(frame(state(status({ opensAt: before, message: '開店まであと少しお待ちください。順番は抽選で決まります。ありがとうございます' })), style));
    screen.draw(frame(state(status({ opensAt: before, message: '開店まであと少しお待ちください。順番は抽選で決まります。ありがとうございます' })), style));
    // The opening: no countdown line, a short message.
    const last = frame(state(status({ message: 'Open' })), style);
    screen.draw(last);
    screen.draw(last);
    const rows = await visible();
    const drawn = rows.slice(rows.length - last.length);
    expect(drawn).toEqual(last.map((line) => line.trimEnd()));
    // Nothing of an earlier frame is left anywhere on the screen (the prompt line may stay).
    expect(rows.filter((row) => row.includes('opens at') || row.includes('開店'))).toEqual([]);
    expect(rows.filter((row) => row.startsWith('waitgate watch'))).toHaveLength(1);
    screen.close();
    expect(await visible()).toEqual(['$ npx waitgate watch --queue drop']); // the operator's screen as it was
  });

  it('cuts a line of wide characters to the terminal width, so none wraps', async () => {
    const cols = 40;
    const lines = frame(state(status({ message: '順番は抽選で決まります。ありがとうございます。順番は抽選で決まります' })), { color: false, columns: cols });
    for (const line of lines) {
      const { term, out, visible } = terminal(cols, 5);
      out.write(line);
      await visible();
      expect(term.buffer.active.cursorY, line).toBe(0); // still on the first row: it did not wrap
    }
  });
});
