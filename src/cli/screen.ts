// The terminal `waitgate watch` draws on. It draws on the terminal's alternate screen (as
// top and less do) and redraws every frame from the top-left corner, clearing what is below:
// a frame shorter than the last (the countdown line gone at the opening), a line that wraps
// or a terminal resized mid-watch leaves nothing stale, where moving the cursor up by the
// last frame's line count did. On close the operator's screen comes back as it was.

import type { Io } from './io.js';

/** What the screen needs of stdout (a TTY's stream has it). */
export type Terminal = Pick<Io['stdout'], 'write'> & { rows?: number };

export class Screen {
  readonly #out: Terminal;
  constructor(out: Terminal) {
    this.#out = out;
    out.write('\x1b[?1049h\x1b[?25l'); // the alternate screen; hide the cursor while drawing
  }
  draw(lines: readonly string[]): void {
    // A frame taller than the terminal would scroll it and move the corner: keep what fits.
    const fits = this.#out.rows && this.#out.rows > 0 ? lines.slice(0, this.#out.rows) : lines;
    this.#out.write(`\x1b[H${fits.map((line) => `${line}\x1b[K`).join('\r\n')}\x1b[J`);
  }
  close(): void {
    this.#out.write('\x1b[?25h\x1b[?1049l');
  }
}
