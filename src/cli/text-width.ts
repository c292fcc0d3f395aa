// How many terminal columns a text takes: East Asian wide and fullwidth characters (CJK,
// Hangul, fullwidth forms) and most emoji take two, combining marks none. An approximation of
// Unicode's East Asian Width table, enough to keep `waitgate watch`'s lines from wrapping.

const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

function columnsOf(codePoint: number): number {
  if (codePoint >= 0x300 && codePoint <= 0x36f) return 0; // combining diacritics
  if (codePoint === 0x200d || (codePoint >= 0xfe00 && codePoint <= 0xfe0f)) return 0; // joiners, variation selectors
  return WIDE.some(([from, to]) => codePoint >= from && codePoint <= to) ? 2 : 1;
}

/** Columns the text takes on a terminal (no escape codes in it). */
export function textWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += columnsOf(ch.codePointAt(0)!);
  return width;
}

/** The text cut to at most `columns` columns, ending in `…` when cut. */
export function cutToWidth(text: string, columns: number): string {
  if (textWidth(text) <= columns) return text;
  let width = 0;
  let kept = '';
  for (const ch of text) {
    const w = columnsOf(ch.codePointAt(0)!);
    if (width + w > columns - 1) break; // room for the ellipsis
    width += w;
    kept += ch;
  }
  return `${kept}…`;
}
