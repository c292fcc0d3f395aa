// The observed admission rate: recorded by the stores, read by the wait estimate.

import type { AdmissionWindow } from './store/store.js';

/** Length of one admission window. The observed rate covers the last one to two of them. */
export const ADMISSION_WINDOW_MS = 10_000;

export const EMPTY_WINDOW: AdmissionWindow = { start: null, current: 0, previous: 0, first: null, last: null, movedAt: null, pace: null };

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

/**
 * One admission step at `now` that admitted `admitted` and dropped `dropped` (as
 * abandoned) of `waitingBefore` members (mirrors `popAndIssue.lua`): the window
 * records every admission, also a step that admitted everyone waiting (it is the rate
 * members were let through at), and is written only then (`last` dates it); `movedAt`
 * marks that the line could move (someone admitted or dropped, or nobody waiting).
 */
export function recordAdmissionStep(
  window: AdmissionWindow,
  admitted: number,
  waitingBefore: number,
  now: number,
  windowMs = ADMISSION_WINDOW_MS,
  dropped = 0,
): AdmissionWindow {
  let next = window;
  if (admitted > 0) {
    const rolled = rollWindow(window, now, windowMs);
    const first = rolled.current === 0 && rolled.previous === 0 ? now : rolled.first;
    next = { ...rolled, current: rolled.current + admitted, first, last: now };
  }
  return admitted > 0 || dropped > 0 || waitingBefore === 0 ? { ...next, movedAt: now } : next;
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
