// One law, two languages: the rules MemoryStore runs in TypeScript (src/admission-control.ts,
// src/rates.ts) and RedisStore runs in Lua (lua/includes/) must give the same answers. The
// includes are loaded as they are, a small harness loops over a batch of inputs on a real
// Redis (EVAL, no keys) and returns each output as %.17g, so the doubles compare exactly;
// fast-check draws the batches (a failing batch shrinks to the one input that differs).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EVALUATE_EVERY_MS, nextRate, ORDER_WINDOW_MS } from '../../src/admission-control.js';
import { DEFAULT_SOLD_OUT_MESSAGE } from '../../src/controls.js';
import { sellOne } from '../../src/store/memory/stock.js';
import {
  defaultBurst,
  MAX_BURST,
  MAX_STEP_GAP_MS,
  MIN_PACE_EVIDENCE,
  nextPace,
  PACE_MEMORY_MS,
  PICKUP_GRACE_MS,
  presenceHead,
  stepOffered,
} from '../../src/rates.js';

const includesDir = join(import.meta.dirname, '..', '..', 'lua', 'includes');
const include = (name: string): string => readFileSync(join(includesDir, `${name}.lua`), 'utf8');
// In the order the scripts include them: int (now), orderWindow/ORDER_FIELDS (orderHealth)
// before the law that uses them.
const INCLUDES = ['now', 'orderHealth', 'adaptiveRate', 'pace', 'ratesInForce', 'tokenRecord', 'stock'];

// ARGV[1] the rule, ARGV[2] a JSON array of argument lists; the reply: one string per output.
const HARNESS = `
local kind, input = ARGV[1], cjson.decode(ARGV[2])
local function opt(v) if v == cjson.null then return nil end return v end
local function g(x) return string.format('%.17g', x) end
local out = {}
for _, c in ipairs(input) do
  if kind == 'nextRate' then
    out[#out + 1] = g(nextRate(c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]))
  elseif kind == 'nextPace' then
    local moved, offered, factor = nextPace(opt(c[1]), opt(c[2]), opt(c[3]), c[4], c[5], c[6])
    out[#out + 1] = g(moved)
    out[#out + 1] = g(offered)
    out[#out + 1] = string.format('%.6g', factor)
  elseif kind == 'defaultBurst' then
    out[#out + 1] = g(defaultBurst(c[1]))
  elseif kind == 'presenceHead' then
    out[#out + 1] = g(presenceHead(c[1], c[2], c[3]))
  elseif kind == 'stepOffered' then
    out[#out + 1] = g(stepOffered(c[1], c[2], c[3]))
  elseif kind == 'sellOne' then
    out[#out + 1] = table.concat(sellOne(opt(c[1]), opt(c[2]), c[3]), '|')
  end
end
return out
`;
const LUA = `${INCLUDES.map(include).join('\n')}\n${HARNESS}`;

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.disconnect());

async function lua(kind: string, cases: unknown[][]): Promise<number[]> {
  const reply = (await redis.eval(LUA, 0, kind, JSON.stringify(cases))) as string[];
  return reply.map(Number);
}

/** A Lua `local NAME = value` (or `local A, B = 1, 2`) constant of an include, as a number. */
function luaConstant(file: string, name: string): number {
  for (const m of include(file).matchAll(/^local ([\w, ]+?) = (.+)$/gm)) {
    const names = m[1]!.split(',').map((s) => s.trim());
    const at = names.indexOf(name);
    if (at >= 0) return Number(m[2]!.split(',')[at]!.trim());
  }
  throw new Error(`${name} not found in lua/includes/${file}.lua`);
}

const RUNS = { numRuns: 25, seed: 23 } as const;
const batch = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(arb, { minLength: 1, maxLength: 400 });
const rate = fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 10_000 }));

type RateCase = [inForce: number, count: number, failed: number, latency: number, samples: number, target: number, min: number, max: number];

function tsRate([inForce, count, failed, latency, samples, target, min, max]: RateCase): number {
  return nextRate(inForce, { count, failed, latency, samples }, { targetLatencyMs: target, minRatePerSecond: min, maxRatePerSecond: max });
}

async function expectSameRates(cases: RateCase[]): Promise<void> {
  const got = await lua('nextRate', cases);
  cases.forEach((c, i) => expect(got[i], `nextRate(${c.join(', ')})`).toBe(tsRate(c)));
}

const rateCase: fc.Arbitrary<RateCase> = fc
  .record({
    inForce: rate,
    count: fc.nat({ max: 100_000 }),
    failedShare: fc.oneof(fc.constant(0), fc.constant(0.1), fc.double({ min: 0, max: 1, noNaN: true })),
    // latency sums are whole ms in Redis (owl int); mean latency around the target.
    meanOverTarget: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 10, noNaN: true })),
    samplesShare: fc.double({ min: 0, max: 1, noNaN: true }),
    target: fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.double({ min: 0.001, max: 1e5, noNaN: true })),
    min: rate,
    span: rate,
  })
  .map(({ inForce, count, failedShare, meanOverTarget, samplesShare, target, min, span }) => {
    const samples = Math.floor(count * samplesShare);
    return [inForce, count, Math.floor(count * failedShare), Math.round(samples * target * meanOverTarget), samples, target, min, min + span];
  });

describe('the adaptive law (adaptiveRate.lua nextRate = admission-control.ts nextRate)', () => {
  it('gives the same rate on the edges: no orders, failure share at 0.1, latency at the target, bounds', async () => {
    const edges: RateCase[] = [];
    for (const inForce of [0, 1, 5, 50, 99.5, 100, 1000, 1e6]) {
      for (const [count, failed] of [
        [0, 0],
        [1, 0],
        [10, 1],
        [10, 2],
        [100, 10],
        [100, 11],
        [30, 3],
        [19, 2],
        [1, 1],
        [7, 7],
      ] as const) {
        // mean latency: none, below, exactly the target, just above, and at ratios that hit
        // both decrease bounds (0.5, 0.9) and the inside between them.
        for (const [latency, samples] of [
          [0, 0],
          [100, 1],
          [500, 1],
          [5000, 10],
          [501, 1],
          [550, 1],
          [999, 1],
          [1000, 1],
          [1001, 1],
          [2000, 2],
          [1111, 2],
          [600, 1],
          [1e9, 1],
        ] as const) {
          for (const [min, max] of [
            [5, 100],
            [0, 1000],
            [1, 1],
            [100, 100],
            [0.5, 1e6],
          ] as const)
            edges.push([inForce, count, failed, latency, samples, 500, min, max]);
        }
      }
    }
    await expectSameRates(edges);
    expect(edges.length).toBeGreaterThan(5000);
  });

  it('gives the same rate over many drawn inputs', async () => {
    await fc.assert(fc.asyncProperty(batch(rateCase), expectSameRates), RUNS);
  });
});

type PaceCase = [moved: number | null, offered: number | null, at: number | null, now: number, stepMoved: number, stepOffered: number];

async function expectSamePace(cases: PaceCase[]): Promise<void> {
  const got = await lua('nextPace', cases);
  cases.forEach(([moved, offered, at, now, stepMoved, stepOffered], i) => {
    const previous = at === null ? null : { moved: moved ?? 0, offered: offered ?? 0, at, factor: 1 };
    const ts = nextPace(previous, now, stepMoved, stepOffered);
    const what = `nextPace(${cases[i]!.join(', ')})`;
    // math.exp in Lua (the C library) and in V8 may differ in the last bit: the sums agree to 1e-12.
    expect(got[3 * i]!, `${what} moved`).toBeCloseTo(ts.moved, -Math.log10(Math.max(1, ts.moved) * 1e-12));
    expect(got[3 * i + 1]!, `${what} offered`).toBeCloseTo(ts.offered, -Math.log10(Math.max(1, ts.offered) * 1e-12));
    // The factor as the script stores it (%.6g) is the factor MemoryStore plans with.
    expect(got[3 * i + 2], `${what} factor`).toBe(ts.factor);
  });
}

const T0 = 1_750_000_000_000;
const paceCase: fc.Arbitrary<PaceCase> = fc
  .record({
    first: fc.boolean(),
    moved: fc.oneof(fc.nat({ max: 100_000 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
    offered: fc.oneof(fc.nat({ max: 100_000 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
    // now before, at, and after the last update, up to days later.
    dt: fc.oneof(fc.constant(0), fc.integer({ min: -5_000, max: 60_000 }), fc.integer({ min: 0, max: 1e10 })),
    stepMoved: fc.nat({ max: 10_000 }),
    // powers of two make exact ties for %.6g (65 / 64 = 1.015625).
    stepOffered: fc.oneof(
      fc.nat({ max: 10_000 }),
      fc.double({ min: 0, max: 10_000, noNaN: true }),
      fc.nat({ max: 13 }).map((j) => 2 ** j),
    ),
  })
  .map(({ first, moved, offered, dt, stepMoved, stepOffered }) =>
    first ? [null, null, null, T0, stepMoved, stepOffered] : [moved, offered, T0, T0 + dt, stepMoved, stepOffered],
  );

describe('the pace of the line (pace.lua nextPace = rates.ts nextPace)', () => {
  it('gives the same sums and stored factor on the edges: first step, now < at, now = at, huge dt, clamps', async () => {
    const edges: PaceCase[] = [];
    for (const [stepMoved, stepOffered] of [
      [0, 0],
      [0, 5],
      [5, 0],
      [1, 1],
      [3, 7],
      [1000, 1],
      [1, 1000],
      [10, 3],
    ] as const) {
      edges.push([null, null, null, T0, stepMoved, stepOffered]);
      for (const [moved, offered] of [
        [0, 0],
        [10, 10],
        [1, 100],
        [100, 1],
        [12.5, 3.25],
      ] as const) {
        for (const dt of [-1000, -1, 0, 1, 100, PACE_MEMORY_MS, 3 * PACE_MEMORY_MS, 1e9, 1e12])
          edges.push([moved, offered, T0, T0 + dt, stepMoved, stepOffered]);
      }
    }
    await expectSamePace(edges);
  });

  it('stores the same factor when moved / offered lies exactly halfway between two 6-digit factors', async () => {
    // 65/64 = 1.015625, 13/128 = 0.1015625, 321/32 = 10.03125, 1/20.48 = 0.048828125 (clamped):
    // %.6g rounds such a tie to the even digit (1.01562), toPrecision(6) away from zero.
    const ties: PaceCase[] = [
      [null, null, null, T0, 65, 64],
      [null, null, null, T0, 13, 128],
      [null, null, null, T0, 321, 32],
      [null, null, null, T0, 67, 64],
      [null, null, null, T0, 100, 2048],
    ];
    for (let k = 1; k < 640; k += 2) ties.push([null, null, null, T0, 640 + k, 640]);
    await expectSamePace(ties);
  });

  it('gives the same sums and stored factor over many drawn inputs', async () => {
    await fc.assert(fc.asyncProperty(batch(paceCase), expectSamePace), RUNS);
  });
});

describe('the rates in force (ratesInForce.lua = rates.ts)', () => {
  it('gives the same default burst', async () => {
    const edges = [0, 0.2, 0.999, 1, 1.5, 2, 99.99, 9999, 9999.999, 10_000, 10_000.5, 10_001, 1e6, 1e12];
    const check = async (rates: number[]): Promise<void> => {
      const got = await lua(
        'defaultBurst',
        rates.map((r) => [r]),
      );
      rates.forEach((r, i) => expect(got[i], `defaultBurst(${r})`).toBe(defaultBurst(r)));
    };
    await check(edges);
    await fc.assert(fc.asyncProperty(batch(rate), check), RUNS);
  });

  it('gives the same presence head', async () => {
    type HeadCase = [rate: number, burst: number, abandonAfterMs: number];
    const check = async (cases: HeadCase[]): Promise<void> => {
      const got = await lua('presenceHead', cases);
      cases.forEach((c, i) => expect(got[i], `presenceHead(${c.join(', ')})`).toBe(presenceHead(...c)));
    };
    const edges: HeadCase[] = [];
    for (const r of [0, 0.1, 1, 3.3, 50, 10_000])
      for (const b of [1, 7, 50, MAX_BURST]) for (const a of [0, 1, 999, 1000, 30_000, 86_400_000]) edges.push([r, b, a]);
    await check(edges);
    const headCase: fc.Arbitrary<HeadCase> = fc.tuple(rate, fc.integer({ min: 1, max: MAX_BURST }), fc.integer({ min: 0, max: 86_400_000 }));
    await fc.assert(fc.asyncProperty(batch(headCase), check), RUNS);
  });
});

describe('the tokens a step offers (pace.lua stepOffered = rates.ts stepOffered)', () => {
  it('gives the same tokens for gaps before, at and past the cap', async () => {
    type OfferCase = [rate: number, lastStepAt: number, now: number];
    const cases: OfferCase[] = [];
    for (const r of [0.1, 1, 3.3, 150, 10_000]) for (const dt of [-5, 0, 1, 333, 1000, MAX_STEP_GAP_MS, MAX_STEP_GAP_MS + 1, 1e9]) cases.push([r, T0, T0 + dt]);
    const got = await lua('stepOffered', cases);
    cases.forEach((c, i) => expect(got[i], `stepOffered(${c.join(', ')})`).toBe(stepOffered(...c)));
  });
});

describe('a unit sold (stock.lua sellOne = memory/stock.ts sellOne)', () => {
  /** The TypeScript rule's outcome in the Lua one's form: the meta fields it changes, as pairs. */
  function tsSold([stock, message, version]: [number | null, string | null, number]): string {
    const before = { version, stock: stock ?? undefined, soldOutMessage: message ?? undefined, mode: 'open' as const };
    const after = sellOne(before);
    if (after === before) return '';
    const fields = ['sk', String(after.stock)];
    if (after.mode === 'closed') fields.push('cm', 'closed', 'cx', after.message!, 'cv', String(after.version));
    return fields.join('|');
  }

  it('takes one unit, closes the queue at the last with the sold-out message, and leaves a queue without stock alone', async () => {
    const cases: Array<[number | null, string | null, number]> = [
      [null, null, 3],
      [0, null, 3],
      [1, null, 3],
      [1, 'All gone', 7],
      [2, 'All gone', 7],
      [100, null, 0],
    ];
    const reply = (await redis.eval(LUA, 0, 'sellOne', JSON.stringify(cases.map(([s, m, v]) => [s === null ? null : String(s), m, String(v)])))) as string[];
    cases.forEach((c, i) => expect(reply[i] ?? '', `sellOne(${c.join(', ')})`).toBe(tsSold(c)));
  });

  it('stock.lua SOLD_OUT equals DEFAULT_SOLD_OUT_MESSAGE', () => {
    expect(/^local SOLD_OUT = '([^']*)'/m.exec(include('stock'))?.[1]).toBe(DEFAULT_SOLD_OUT_MESSAGE);
  });
});

describe('the constants both stores read', () => {
  it.each([
    ['orderHealth', 'ORDER_WINDOW_MS', ORDER_WINDOW_MS],
    ['adaptiveRate', 'EVALUATE_EVERY_MS', EVALUATE_EVERY_MS],
    ['tokenRecord', 'PICKUP_GRACE_MS', PICKUP_GRACE_MS],
    ['pace', 'PACE_MEMORY_MS', PACE_MEMORY_MS],
    ['pace', 'MAX_STEP_GAP_MS', MAX_STEP_GAP_MS],
    ['pace', 'MIN_PACE_EVIDENCE', MIN_PACE_EVIDENCE],
    ['ratesInForce', 'MAX_BURST', MAX_BURST],
  ] as const)('%s.lua %s equals the TypeScript one', (file, name, value) => {
    expect(luaConstant(file, name)).toBe(value);
  });
});
