// Progress of a long command made of steps (the sections of `npm run bench`): on a terminal,
// one line redrawn every second at the bottom (a bar, the step, the elapsed and the remaining
// time) under the command's own output; when piped, one plain line as each step starts and
// ends, so a CI log reads as it did. The remaining time adds up what each step still to run
// took last time (its `seconds` in the previous results), or the mean of the steps done.

const BAR_WIDTH = 24;

/** m:ss or h:mm:ss. */
export function formatClock(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * @param {object} options
 * @param {string[]} options.steps the steps, in the order they run
 * @param {Record<string, number>} [options.expectedSeconds] how long each step took last time
 * @param {{ write(text: string): unknown, isTTY?: boolean, columns?: number }} [options.stream] where the progress goes, default process.stderr
 * @param {{ write(text: string): unknown }} [options.output] where the command's lines go, default process.stdout
 * @param {() => number} [options.now] ms clock (tests)
 */
export function createProgress({ steps, expectedSeconds = {}, stream = process.stderr, output = process.stdout, now = () => performance.now() }) {
  const tty = Boolean(stream.isTTY);
  const startedAt = now();
  const tookSeconds = [];
  let index = -1;
  let stepStartedAt = startedAt;
  let timer = null;
  let drawn = false;

  const remainingSeconds = () => {
    const mean = tookSeconds.length > 0 ? tookSeconds.reduce((a, b) => a + b, 0) / tookSeconds.length : undefined;
    let left = 0;
    for (let i = Math.max(index, 0); i < steps.length; i++) {
      const expected = expectedSeconds[steps[i]] ?? mean;
      if (expected === undefined) return undefined;
      // The running step: what it should still take (at least nothing).
      left += i === index ? Math.max(0, expected - (now() - stepStartedAt) / 1000) : expected;
    }
    return left;
  };

  const status = () => {
    const elapsed = (now() - startedAt) / 1000;
    const left = remainingSeconds();
    const mean = tookSeconds.length > 0 ? tookSeconds.reduce((a, b) => a + b, 0) / tookSeconds.length : undefined;
    const expected = index < 0 ? undefined : (expectedSeconds[steps[index]] ?? mean);
    // Steps done, and the share of the running one its expected time says is behind it.
    const done = index < 0 ? 0 : index + (expected ? Math.min(0.99, (now() - stepStartedAt) / 1000 / expected) : 0);
    const filled = Math.min(BAR_WIDTH, Math.round((BAR_WIDTH * done) / steps.length));
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    const step = index < 0 ? 'starting' : `${index + 1}/${steps.length} ${steps[index]}`;
    return `${bar} ${step} · ${formatClock(elapsed)} elapsed · ${left === undefined ? 'remaining unknown' : `~${formatClock(left)} left`}`;
  };

  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  const draw = () => {
    const line = status();
    const columns = stream.columns ?? 80;
    stream.write(`\r\x1b[2K${line.length > columns - 1 ? line.slice(0, columns - 1) : line}`);
    drawn = true;
  };

  return {
    /** Prints one line of the command's output (above the bar on a terminal). */
    log(line) {
      clear();
      output.write(`${line}\n`);
      if (tty && timer) draw();
    },
    /** The next step starts. */
    step(name) {
      if (index >= 0) tookSeconds.push((now() - stepStartedAt) / 1000);
      index = steps.indexOf(name) >= 0 ? steps.indexOf(name) : index + 1;
      stepStartedAt = now();
      if (tty) {
        if (!timer) {
          timer = setInterval(draw, 1000);
          timer.unref?.();
        }
        draw();
      } else {
        stream.write(`progress: step ${index + 1}/${steps.length} ${name} starts, ${status().split(' · ').slice(1).join(', ')}\n`);
      }
    },
    /** All steps ended: the bar goes, and a last line says how long it all took. */
    end() {
      if (timer) clearInterval(timer);
      timer = null;
      clear();
      if (index < 0) return; // no step ran (a replot, another mode of the command)
      stream.write(`progress: ${steps.length} steps done in ${formatClock((now() - startedAt) / 1000)}\n`);
    },
  };
}
