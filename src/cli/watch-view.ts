// What `waitgate watch` draws: the terminal frame, the one-line-a-second form for a pipe,
// and the sparkline of admissions. Pure functions of the readings.

import type { StatusJson } from './commands.js';
import { activeLine, dec, instant, int, lanesLine, totalsLine, waitLine } from './format.js';
import { cutToWidth } from './text-width.js';

const BARS = '▁▂▃▄▅▆▇█';

/** One bar per value, scaled to the largest (all ▁ when every value is 0). */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((v) => {
      if (max <= 0 || v <= 0) return BARS[0];
      return BARS[Math.max(1, Math.round((v / max) * (BARS.length - 1)))];
    })
    .join('');
}

/** What the watch knows at one redraw. */
export interface WatchState {
  status: StatusJson | null;
  /** Admissions in each second of the last minute, oldest first. */
  history: number[];
  /** The last failed reading, shown until one succeeds. */
  error: string | null;
}

export interface FrameStyle {
  color: boolean;
  columns: number;
}

const paint = (on: boolean, code: string, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
const MODE_COLOR: Record<string, string> = { open: '32', paused: '33', closed: '31', passthrough: '36' };

/** The lines of one terminal frame, each cut to the terminal's width (so none wraps and the redraw stays in place). */
export function frame(state: WatchState, style: FrameStyle): string[] {
  // One column spare: a line that fills the last column makes some terminals wrap early.
  const cut = (text: string) => cutToWidth(text, Math.max(1, style.columns - 1));
  const row = (label: string, value: string) => cut(`${label.padEnd(12)}${value}`);
  const s = state.status;
  if (!s) return [cut('waitgate watch: connecting…'), ...(state.error ? [paint(style.color, '31', cut(`error       ${state.error}`))] : [])];
  const c = s.controls;
  const clock = new Date(s.now).toISOString().slice(11, 19);
  const lines = [paint(style.color, '1', cut(`waitgate watch · ${s.queue} (prefix ${s.prefix}) · ${clock} UTC · Ctrl-C to quit`))];
  lines.push(
    paint(style.color, MODE_COLOR[c.mode] ?? '0', row('mode', `${c.mode.toUpperCase()}${c.message === null ? '' : `  ${JSON.stringify(c.message)}`}`)),
  );
  if (c.opensAt !== null) lines.push(row('opens at', `${instant(c.opensAt, s.now)}${c.shuffle ? ', shuffled' : ''}`));
  lines.push(row('waiting', int(s.stats.waiting)));
  if (s.stats.lanes) lines.push(row('lanes', lanesLine(s.stats.lanes)));
  lines.push(row('active', activeLine(s.stats, c)));
  const peak = Math.max(0, ...state.history);
  const spark = state.history.length > 0 ? `  ${sparkline(state.history)}  peak ${dec(peak)}/s over ${state.history.length}s` : '';
  lines.push(row('admitted/s', `${dec(s.stats.admittedPerSecond)}${spark}`));
  lines.push(row('totals', totalsLine(s.stats.totals)));
  lines.push(row('wait', waitLine(s.stats.waitSeconds)));
  const rate = c.admitRatePerSecond === null ? "instances' option" : `${dec(c.admitRatePerSecond)}/s`;
  const burst = c.admitBurst === null ? "instances' option" : int(c.admitBurst);
  lines.push(row('rate', `${rate}  burst ${burst}`));
  if (state.error) lines.push(paint(style.color, '31', row('error', `${state.error} (retrying every second)`)));
  return lines;
}

/** One line a second, for a pipe or a file: key=value pairs after an ISO time. */
export function logLine(s: StatusJson): string {
  const { stats, controls: c } = s;
  const cap = c.unset.includes('maxActive') ? '' : c.maxActive === null ? '/none' : `/${c.maxActive}`;
  const parts = [
    new Date(s.now).toISOString(),
    `mode=${c.mode}`,
    `waiting=${stats.waiting}`,
    `active=${stats.active}${cap}`,
    `claimed=${stats.claimed}`,
    `admitted/s=${Math.round(stats.admittedPerSecond * 10) / 10}`,
  ];
  if (stats.totals) {
    const t = stats.totals;
    parts.push(`entered=${t.entered}`, `admitted=${t.admitted}`, `abandoned=${t.abandoned}`, `consumed=${t.consumed}`, `expired=${t.expired}`);
  }
  if (stats.lanes) {
    for (const l of stats.lanes) parts.push(`lane_${l.name}=${l.waiting}${l.codeUsesLeft === null ? '' : `/${l.codeUsesLeft}`}`);
  }
  if (stats.waitSeconds) parts.push(`wait_p50=${stats.waitSeconds.p50}s`, `wait_p90=${stats.waitSeconds.p90}s`, `wait_max=${stats.waitSeconds.max}s`);
  if (c.opensAt !== null) parts.push(`opens_at=${new Date(c.opensAt).toISOString()}`);
  return parts.join(' ');
}
