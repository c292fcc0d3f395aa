// startAdmitter: admit() on an unref'd timer, one call at a time, errors emitted and never thrown.

/** A running admitter. Safe to run one on every app instance: the bucket in the store is shared. */
export interface Admitter {
  /** Stops the timer and resolves once a call in flight has settled. */
  stop(): Promise<void>;
}

export interface AdmitterOptions {
  /** Milliseconds between the end of one admit() and the start of the next. Default 1000. */
  intervalMs?: number;
}

/**
 * Runs `tick` every `intervalMs` (the next run is scheduled when the previous one
 * settled, so calls never overlap). The timer is unref'd: it never keeps the
 * process alive. `tick` must not throw; the queue passes one that emits errors.
 */
export function startTimer(tick: () => Promise<void>, intervalMs: number): Admitter {
  let stopped = false;
  let inFlight: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (delay: number) => {
    timer = setTimeout(run, delay);
    timer.unref?.();
  };
  const run = () => {
    inFlight = tick().finally(() => {
      inFlight = null;
      if (!stopped) schedule(intervalMs);
    });
  };
  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
