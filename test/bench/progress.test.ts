// The progress of `npm run bench`: a line per step in a CI log, and on a terminal one bar
// redrawn at the bottom under the command's output (rendered by a terminal emulator,
// xterm.js headless, so the escape codes are checked as a terminal shows them).

import { describe, expect, it } from 'vitest';
import { createProgress, formatClock } from '../../bench/lib/progress.mjs';
import { terminal } from '../support/terminal.js';

function clock() {
  let ms = 0;
  return { now: () => ms, advance: (seconds: number) => (ms += seconds * 1000) };
}

describe('bench progress', () => {
  it('formats clocks as m:ss and h:mm:ss', () => {
    expect([formatClock(0), formatClock(59.6), formatClock(61), formatClock(3725)]).toEqual(['0:00', '1:00', '1:01', '1:02:05']);
  });

  it('when piped: one line as each step starts, with the elapsed and remaining time, and one at the end', () => {
    const written: string[] = [];
    const sink = { write: (text: string) => written.push(text) };
    const c = clock();
    const progress = createProgress({ steps: ['micro', 'memory', 'polling'], expectedSeconds: { micro: 10, memory: 20 }, stream: sink, output: sink, now: c.now });
    progress.step('micro');
    progress.log('a line of the section');
    c.advance(12);
    progress.step('memory');
    c.advance(18);
    progress.step('polling'); // no time of its own last run: the mean of the steps done (15 s)
    c.advance(15);
    progress.end();
    expect(written.join('')).toBe(
      [
        'progress: step 1/3 micro starts, 0:00 elapsed, remaining unknown', // polling: no time, no step done yet
        'a line of the section',
        'progress: step 2/3 memory starts, 0:12 elapsed, ~0:32 left', // 20 + the mean of 12 (12 s)
        'progress: step 3/3 polling starts, 0:30 elapsed, ~0:15 left',
        'progress: 3 steps done in 0:45',
        '',
      ].join('\n'),
    );
  });

  it('on a terminal: the bar stays on the last line under the output, and goes at the end', async () => {
    const { out: tty, visible } = terminal(72, 6);
    const c = clock();
    const progress = createProgress({ steps: ['micro', 'memory'], expectedSeconds: { micro: 10, memory: 30 }, stream: tty, output: tty, now: c.now });
    progress.step('micro');
    c.advance(5);
    progress.log('[1/5] per operation');
    progress.log('enter c1: 120 µs');
    expect(await visible()).toEqual([
      '[1/5] per operation',
      'enter c1: 120 µs',
      '[######..................] 1/2 micro · 0:05 elapsed · ~0:35 left', // half of the first of two steps
    ]);
    c.advance(5);
    progress.step('memory');
    progress.log('memory per member: 127 B');
    progress.end();
    expect(await visible()).toEqual(['[1/5] per operation', 'enter c1: 120 µs', 'memory per member: 127 B', 'progress: 2 steps done in 0:10']);
  });
});
