// waitgate watch: reads the queue every second until SIGINT or SIGTERM. On a terminal it
// redraws one frame in place; otherwise, or with --json, it prints one line (or one JSON
// object) a second.

import type { Values } from './args.js';
import { readStatus, withQueue, type StatusJson } from './commands.js';
import { oneLine } from './errors.js';
import { print, type Io } from './io.js';
import { Screen } from './screen.js';
import { frame, logLine, type WatchState } from './watch-view.js';

const INTERVAL_MS = 1000;
const HISTORY_SECONDS = 60;

/** Admissions in the second(s) since the previous reading, from the store's totals and clock. */
function admittedSince(previous: StatusJson | null, current: StatusJson): number | null {
  if (!previous?.stats.totals || !current.stats.totals) return null;
  const seconds = (current.now - previous.now) / 1000;
  if (seconds <= 0) return null;
  return Math.max(0, current.stats.totals.admitted - previous.stats.totals.admitted) / seconds;
}

export function runWatch(values: Values, io: Io): Promise<void> {
  const tty = io.stdout.isTTY === true;
  const color = tty && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
  return withQueue(
    values,
    io,
    'watch',
    (connection) =>
      new Promise<void>((resolve) => {
        const screen = tty && values.json !== true ? new Screen(io.stdout) : null;
        const state: WatchState = { status: null, history: [], error: null };
        let timer: NodeJS.Timeout | undefined;
        let stopped = false;
        const stop = () => {
          if (stopped) return;
          stopped = true;
          clearTimeout(timer);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          screen?.close();
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);

        const tick = async () => {
          const started = Date.now();
          try {
            const status = await readStatus(connection);
            const rate = admittedSince(state.status, status) ?? (state.status ? status.stats.admittedPerSecond : null);
            if (rate !== null) state.history = [...state.history, rate].slice(-HISTORY_SECONDS);
            state.status = status;
            state.error = null;
            if (stopped) return;
            if (screen) screen.draw(frame(state, { color, columns: io.stdout.columns || 80 }));
            else print(io.stdout, values.json ? JSON.stringify(status) : logLine(status));
          } catch (error) {
            const previous = state.error;
            state.error = oneLine(connection.connectionProblem() ?? (error instanceof Error ? error.message : String(error)));
            if (stopped) return;
            if (screen) screen.draw(frame(state, { color, columns: io.stdout.columns || 80 }));
            else if (state.error !== previous) io.stderr.write(`waitgate: ${state.error}\n`); // once per problem, not once a second
          }
          if (!stopped) timer = setTimeout(() => void tick(), Math.max(0, INTERVAL_MS - (Date.now() - started)));
        };
        void tick();
      }),
    { reconnect: true },
  );
}
