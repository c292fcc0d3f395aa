// startAdmitter: admit() at a fixed rate on an unref'd timer, one call at a time,
// errors reported once per incident and never thrown.

import { z } from 'zod';
import { isWaitgateError } from './errors.js';
import { parseStrict } from './options.js';
import type { RecoveryNotice } from './queue-events.js';

/** A running admitter. Safe to run one on every app instance: the bucket in the store is shared. */
export interface Admitter {
  /** Stops the timer and resolves once a call in flight has settled. */
  stop(): Promise<void>;
}

export interface AdmitterOptions {
  /**
   * Milliseconds between the starts of two admit() calls (a fixed rate: a call's own
   * duration does not delay the next one; a call that overruns is followed at once,
   * never overlapped). 1–3,600,000; default 1000.
   */
  intervalMs?: number;
}

const optionsSchema = z.strictObject({
  intervalMs: z.number().int().min(1).max(3_600_000).default(1000),
});

/**
 * Validates admitter options like the queue's own (a typo such as `interval` is refused).
 * @throws {@link WaitgateConfigError}
 */
export function parseAdmitterOptions(options: unknown): Required<AdmitterOptions> {
  return parseStrict(optionsSchema, options ?? {});
}

/**
 * Runs `tick` every `intervalMs`, at a fixed rate: each run is due `intervalMs` after
 * the previous one was due, so one admitter with the default burst (rate × 1 s)
 * keeps up with the configured rate whatever the round trip. Calls never overlap; a
 * run that overran its slot is followed at once, and missed slots are skipped, not
 * caught up in a burst. The timer is unref'd: it never keeps the process alive.
 * `tick` must not throw; the queue passes one that reports errors.
 */
export function startTimer(tick: () => Promise<void>, intervalMs: number, clock: () => number = () => performance.now()): Admitter {
  let stopped = false;
  let inFlight: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let due = clock();

  const schedule = () => {
    const now = clock();
    due += intervalMs;
    if (due < now) due = now; // overran: go at once, and do not try to catch up
    timer = setTimeout(run, due - now);
    timer.unref?.();
  };
  const run = () => {
    inFlight = tick().finally(() => {
      inFlight = null;
      if (!stopped) schedule();
    });
  };
  timer = setTimeout(run, 0);
  timer.unref?.();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}

/**
 * {@link startTimer} for `admit()`: errors never leave the timer. The first of an
 * incident (and the first of another kind) is reported, the rest are counted, and the
 * end of the incident is reported as recovered.
 */
export function startReportingTimer(
  admit: () => Promise<unknown>,
  intervalMs: number,
  report: { reportError(error: Error): void; recovered(notice: RecoveryNotice): void },
): Admitter {
  let incident: { since: number; failedCalls: number; lastCode: string } | null = null;
  return startTimer(async () => {
    try {
      await admit();
      if (incident) {
        report.recovered({ source: 'admitter', failedCalls: incident.failedCalls, durationMs: Date.now() - incident.since });
        incident = null;
      }
    } catch (caught) {
      const error = caught instanceof Error ? caught : new Error(String(caught));
      const code = isWaitgateError(error) ? error.code : error.name;
      incident ??= { since: Date.now(), failedCalls: 0, lastCode: '' };
      incident.failedCalls++;
      if (incident.lastCode !== code) report.reportError(error);
      incident.lastCode = code;
    }
  }, intervalMs);
}
