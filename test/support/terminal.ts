// A headless terminal emulator (xterm.js) for tests of what a terminal shows: a tty-like
// stream to write to, and the visible rows after every write has been rendered.

import xterm from '@xterm/headless';

const { Terminal } = xterm;

/** A terminal of the given size, the stream writing to it, and its visible rows (trailing blanks trimmed). */
export function terminal(cols: number, rows: number) {
  const term = new Terminal({ cols, rows, allowProposedApi: true, convertEol: true /* a tty's ONLCR */ });
  let pending = Promise.resolve();
  const out = {
    isTTY: true as const,
    columns: cols,
    rows,
    write(text: string): boolean {
      pending = pending.then(() => new Promise<void>((resolve) => term.write(text, resolve)));
      return true;
    },
  };
  const visible = async () => {
    await pending;
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < term.rows; y++) lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines;
  };
  return { term, out, visible };
}
