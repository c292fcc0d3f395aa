// A very small charting library: line charts as standalone SVG strings, no dependencies.

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** 1, 2, 5 x 10^k ticks covering [0, max]. */
function niceTicks(max, count = 5) {
  if (!(max > 0)) return { step: 1, top: 1, ticks: [0, 1] };
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const top = Math.ceil(max / step) * step;
  const ticks = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { step, top, ticks };
}

const label = (v) => (Math.abs(v) >= 10_000 ? `${Number((v / 1000).toPrecision(3))}k` : String(Number(v.toPrecision(4))));

/**
 * @param {object} o
 * @param {string} o.title
 * @param {string} [o.xLabel]
 * @param {string} [o.yLabel]
 * @param {{ name: string, points: Array<[number, number|null]>, color?: string, dash?: string, width?: number }[]} o.series
 * @param {{ y: number, label: string, color?: string }[]} [o.hLines]  horizontal reference lines
 * @param {number} [o.yMax]
 * @param {boolean} [o.logY]
 */
export function lineChart({ title, subtitle, xLabel = 'seconds', yLabel = '', series, hLines = [], yMax, width = 760, height = 340 }) {
  const m = { top: subtitle ? 56 : 40, right: 20, bottom: 64, left: 64 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]).filter((v) => v !== null && Number.isFinite(v)));
  const xMax = Math.max(1, ...xs);
  const xMin = Math.min(0, ...xs);
  const yTop = yMax ?? Math.max(1, ...ys, ...hLines.map((l) => l.y)) * 1.05;
  const yt = niceTicks(yTop);
  const xt = niceTicks(xMax - xMin, 8);
  const X = (x) => m.left + ((x - xMin) / (xt.top || 1)) * w;
  const Y = (y) => m.top + h - (y / yt.top) * h;
  const parts = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(`<text x="${m.left}" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(title)}</text>`);
  if (subtitle) parts.push(`<text x="${m.left}" y="40" font-size="11" fill="#4b5563">${esc(subtitle)}</text>`);
  for (const v of yt.ticks) {
    parts.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${m.left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end" fill="#374151">${label(v)}</text>`);
  }
  for (const v of xt.ticks) {
    const x = X(v + xMin);
    if (x > m.left + w + 0.5) continue;
    parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${m.top + h}" y2="${m.top + h + 4}" stroke="#6b7280"/>`);
    parts.push(`<text x="${x.toFixed(1)}" y="${m.top + h + 17}" text-anchor="middle" fill="#374151">${label(v + xMin)}</text>`);
  }
  parts.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${m.top + h}" y2="${m.top + h}" stroke="#6b7280"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + h}" stroke="#6b7280"/>`);
  parts.push(`<text x="${m.left + w / 2}" y="${m.top + h + 34}" text-anchor="middle" fill="#374151">${esc(xLabel)}</text>`);
  if (yLabel) parts.push(`<text transform="translate(16 ${m.top + h / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${esc(yLabel)}</text>`);
  for (const line of hLines) {
    const color = line.color ?? '#6b7280';
    parts.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${Y(line.y).toFixed(1)}" y2="${Y(line.y).toFixed(1)}" stroke="${color}" stroke-dasharray="6 4" stroke-width="1.5"/>`);
    parts.push(`<text x="${m.left + w - 4}" y="${(Y(line.y) - 5).toFixed(1)}" text-anchor="end" fill="${color}">${esc(line.label)}</text>`);
  }
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    // Break the line where a value is missing.
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (y === null || !Number.isFinite(y)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${X(x).toFixed(1)},${Y(Math.min(y, yt.top)).toFixed(1)}`;
      pen = true;
    }
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="${s.width ?? 2}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} stroke-linejoin="round"/>`);
  });
  // Legend under the x axis label.
  let lx = m.left;
  const ly = height - 10;
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    parts.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="3"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    parts.push(`<text x="${lx + 23}" y="${ly}" fill="#111827">${esc(s.name)}</text>`);
    lx += 23 + s.name.length * 6.6 + 18;
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Horizontal grouped bars (e.g. ratios per operation), with optional target marks. */
export function barChart({ title, subtitle, groups, seriesNames, unit = '', targets = {}, width = 760 }) {
  const rowH = 18;
  const gap = 14;
  const m = { top: subtitle ? 56 : 40, right: 70, bottom: 40, left: 170 };
  const rows = groups.length * (seriesNames.length * rowH + gap);
  const height = m.top + rows + m.bottom;
  const w = width - m.left - m.right;
  const max = Math.max(...groups.flatMap((g) => g.values.filter(Number.isFinite)), ...Object.values(targets)) * 1.08;
  const t = niceTicks(max);
  const X = (v) => m.left + (v / t.top) * w;
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`, `<rect width="${width}" height="${height}" fill="#ffffff"/>`];
  parts.push(`<text x="16" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(title)}</text>`);
  if (subtitle) parts.push(`<text x="16" y="40" font-size="11" fill="#4b5563">${esc(subtitle)}</text>`);
  for (const v of t.ticks) {
    parts.push(`<line x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" y1="${m.top - 4}" y2="${m.top + rows}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${X(v).toFixed(1)}" y="${m.top + rows + 16}" text-anchor="middle" fill="#374151">${label(v)}${unit}</text>`);
  }
  let y = m.top;
  for (const g of groups) {
    parts.push(`<text x="${m.left - 8}" y="${y + (seriesNames.length * rowH) / 2 + 4}" text-anchor="end" fill="#111827">${esc(g.name)}</text>`);
    g.values.forEach((v, i) => {
      const color = PALETTE[i % PALETTE.length];
      if (Number.isFinite(v)) {
        parts.push(`<rect x="${m.left}" y="${y + i * rowH + 2}" width="${Math.max(1, X(Math.min(v, t.top)) - m.left).toFixed(1)}" height="${rowH - 4}" fill="${color}"/>`);
        parts.push(`<text x="${(X(Math.min(v, t.top)) + 4).toFixed(1)}" y="${y + i * rowH + 13}" fill="#111827">${label(v)}${unit}</text>`);
      }
    });
    const target = targets[g.name];
    if (target !== undefined) {
      parts.push(`<line x1="${X(target).toFixed(1)}" x2="${X(target).toFixed(1)}" y1="${y}" y2="${y + seriesNames.length * rowH}" stroke="#111827" stroke-width="2" stroke-dasharray="4 3"/>`);
    }
    y += seriesNames.length * rowH + gap;
  }
  let lx = m.left;
  seriesNames.forEach((name, i) => {
    parts.push(`<rect x="${lx}" y="${height - 18}" width="14" height="10" fill="${PALETTE[i % PALETTE.length]}"/>`);
    parts.push(`<text x="${lx + 19}" y="${height - 9}" fill="#111827">${esc(name)}</text>`);
    lx += 19 + name.length * 6.6 + 18;
  });
  if (Object.keys(targets).length) parts.push(`<text x="${width - 16}" y="${height - 9}" text-anchor="end" fill="#111827">- - target</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/**
 * A scatter plot, both axes from 0 and on the same scale (square plot area), with reference
 * lines through the origin (`slopes`: y = slope × x, e.g. 1 for "estimate = actual").
 * @param {{ name: string, points: Array<[number, number]>, color?: string }[]} o.series
 * @param {{ slope: number, label: string, color?: string, dash?: string }[]} [o.slopes]
 * @param {number} [o.max] the top of both axes (points beyond are drawn on the edge)
 */
export function scatterChart({ title, subtitle, xLabel, yLabel, series, slopes = [], max, width = 760, height = 640 }) {
  const m = { top: subtitle ? 56 : 40, right: 20, bottom: 64, left: 64 };
  const side = Math.min(width - m.left - m.right, height - m.top - m.bottom);
  const all = series.flatMap((s) => s.points.flat()).filter(Number.isFinite);
  const t = niceTicks(max ?? Math.max(1, ...all) * 1.02, 8);
  const X = (x) => m.left + (Math.min(x, t.top) / t.top) * side;
  const Y = (y) => m.top + side - (Math.min(y, t.top) / t.top) * side;
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`, `<rect width="${width}" height="${height}" fill="#ffffff"/>`];
  parts.push(`<text x="${m.left}" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(title)}</text>`);
  if (subtitle) parts.push(`<text x="${m.left}" y="40" font-size="11" fill="#4b5563">${esc(subtitle)}</text>`);
  for (const v of t.ticks) {
    parts.push(`<line x1="${m.left}" x2="${m.left + side}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#e5e7eb"/>`);
    parts.push(`<line x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" y1="${m.top}" y2="${m.top + side}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${m.left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end" fill="#374151">${label(v)}</text>`);
    parts.push(`<text x="${X(v).toFixed(1)}" y="${m.top + side + 17}" text-anchor="middle" fill="#374151">${label(v)}</text>`);
  }
  parts.push(`<line x1="${m.left}" x2="${m.left + side}" y1="${m.top + side}" y2="${m.top + side}" stroke="#6b7280"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + side}" stroke="#6b7280"/>`);
  parts.push(`<text x="${m.left + side / 2}" y="${m.top + side + 34}" text-anchor="middle" fill="#374151">${esc(xLabel)}</text>`);
  parts.push(`<text transform="translate(16 ${m.top + side / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${esc(yLabel)}</text>`);
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    const dots = s.points.map(([x, y]) => `<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="1.8"/>`);
    parts.push(`<g fill="${color}" fill-opacity="0.45">${dots.join('')}</g>`);
  });
  for (const { slope, label: name, color = '#111827', dash = '6 4' } of slopes) {
    // From the origin to where y = slope × x leaves the square.
    const x2 = slope > 1 ? t.top / slope : t.top;
    parts.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(x2).toFixed(1)}" y2="${Y(slope * x2).toFixed(1)}" stroke="${color}" stroke-width="1.5" stroke-dasharray="${dash}"/>`);
    parts.push(`<text x="${(X(x2) - 4).toFixed(1)}" y="${(Y(slope * x2) + (slope > 1 ? 14 : -6)).toFixed(1)}" text-anchor="end" fill="${color}">${esc(name)}</text>`);
  }
  let lx = m.left;
  const ly = height - 10;
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    parts.push(`<circle cx="${lx + 6}" cy="${ly - 4}" r="4" fill="${color}"/>`);
    parts.push(`<text x="${lx + 15}" y="${ly}" fill="#111827">${esc(s.name)}</text>`);
    lx += 15 + s.name.length * 6.6 + 18;
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
