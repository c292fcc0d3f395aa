// startAdmitter: admit() at a fixed rate on an unref'd timer, one call at a time,
// errors reported once per incident and never thrown.

import { z } from 'zod';
import { parseStrict } from './options.js';

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
