// Small numeric helpers: percentiles, medians, a latency recorder.

/** The q-quantile (0..1) of a sorted array, nearest-rank. */
export function quantileSorted(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function median(values) {
  const s = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function mean(values) {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Latencies in ms, kept in a growable Float64Array. */
export class Latencies {
  #data = new Float64Array(1 << 16);
  #n = 0;
  push(ms) {
    if (this.#n === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#n++] = ms;
  }
  get count() {
    return this.#n;
  }
  merge(other) {
    for (const v of other.values()) this.push(v);
  }
  values() {
    return this.#data.subarray(0, this.#n);
  }
  summary() {
    const s = Float64Array.from(this.values()).sort();
    return { count: s.length, p50: quantileSorted(s, 0.5), p99: quantileSorted(s, 0.99), max: s.length ? s[s.length - 1] : NaN };
  }
}

export const round = (v, digits = 2) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);
