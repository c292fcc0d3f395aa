// The observed admission rate: recorded by the stores, read by the wait estimate.

import type { AdmissionWindow } from './types.js';

/** Length of one admission window. The observed rate covers the last one to two of them. */
export const ADMISSION_WINDOW_MS = 10_000;

export const EMPTY_WINDOW: AdmissionWindow = { start: null, current: 0, previous: 0, first: null };

/**
 * Moves the window forward to `now` (what `popAndIssue.lua` does in Redis).
 * A window older than two lengths holds nothing any more.
 */
export function rollWindow(window: AdmissionWindow, now: number, windowMs = ADMISSION_WINDOW_MS): AdmissionWindow {
  const start = window.start ?? now;
  if (now - start >= 2 * windowMs) return { ...window, start: now, current: 0, previous: 0 };
  if (now - start >= windowMs) return { ...window, start: start + windowMs, current: 0, previous: window.current };
  return { ...window, start };
}

/** Records `count` admissions at `now` (mirrors `popAndIssue.lua`). */
export function recordAdmissions(window: AdmissionWindow, count: number, now: number, windowMs = ADMISSION_WINDOW_MS): AdmissionWindow {
  const rolled = rollWindow(window, now, windowMs);
  if (count <= 0) return rolled;
  const first = rolled.current === 0 && rolled.previous === 0 ? now : rolled.first;
  return { ...rolled, current: rolled.current + count, first };
}

/**
 * Admissions per second over the last window (the previous window weighted by
 * how much of it still overlaps), over the time actually covered when the run of
 * admissions is younger than a window. 0 when nothing was admitted lately.
 */
export function observedRate(window: AdmissionWindow, now: number, windowMs = ADMISSION_WINDOW_MS): number {
  const rolled = rollWindow(window, now, windowMs);
  const elapsed = now - (rolled.start ?? now);
  const count = rolled.previous * Math.max(0, (windowMs - elapsed) / windowMs) + rolled.current;
  if (count <= 0 || rolled.first === null) return 0;
  const coveredMs = Math.min(windowMs, Math.max(1000, now - rolled.first));
  return count / (coveredMs / 1000);
}
