import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.js';

/** The files that run on the global setup's Redis (inject('redisUrl')). */
const REDIS_PROJECT = ['test/store/redis-*.test.ts', 'test/store/head-moves.test.ts'];
/** The files that run the built package (dist/) or tsc: slow, and they need `npm run build` first. */
const BUILT_PROJECT = ['test/types/**/*.test.ts', 'test/cli/**/*.test.ts'];
/**
 * Unit files paced by the clock rather than the CPU: event streams at their polling pace, the
 * client's backoffs. They run in the waiting group.
 */
const CLOCKED_PROJECT = ['test/http/**/*.test.ts', 'test/client/**/*.test.ts'];
/** The short run of `npm run simulate`: real seconds of a sale, in child processes (waiting group). */
const SIMULATE_PROJECT = ['test/bench/simulate-short.test.ts'];
/** The short run of `npm run simulate:bots`: a swarm that hashes proofs of work (busy group). */
const BOTS_PROJECT = ['test/bench/simulate-bots-short.test.ts'];
/** Bun, Deno and Next.js serving dist/ (their binaries are pinned devDependencies): `npm run build` first. */
const RUNTIMES_PROJECT = ['test/runtimes/**/*.test.ts'];

// Two groups, one after the other, every file of a group in one pool, longest first
// (test/support/sequencer.ts).
// - Busy (`unit`, `bots`, `built`, `runtimes`, `e2e`, `package`): mostly CPU (tsc, Chromium, npm, next
//   build; and timing asserts that a starved CPU breaks), so one file per core.
// - Waiting (`clocked`, `simulate`, `redis`, `faults`): mostly sleeps through real TTLs, fault
//   timeouts, restarts, polling paces and a sale's seconds, so several files per core (and the
//   contract suites on Redis run their tests side by side).
const BUSY = { sequence: { groupOrder: 0 }, maxWorkers: 2 };
const WAITING = { sequence: { groupOrder: 1 }, maxWorkers: 6 };

// `unit` needs nothing; `clocked` (the adapters over real HTTP, the client) neither; `simulate`
// and `bots` run the short simulations; `built` runs dist/ (the command) and tsc (the type cases);
// `runtimes` serves dist/ on Bun, Deno and Next.js; `redis` gets a real redis-server from the
// global setup; `faults` spawns its own servers to break them; `e2e` drives the example shop
// in Debian's Chromium; `package` installs the packed tarball. `npm run test:quick` runs
// `unit`, `clocked` and a Redis smoke.
export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirstSequencer },
    // `npm test` (and CI) runs with --coverage: of src/ only, printed as a summary and a
    // table that lists the uncovered lines of each file not fully covered.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // src/cli/ runs as the built command in child processes (test/cli spawns dist/cli.js, as
      // a user runs it), which in-process coverage cannot see: counted, it would read 0%.
      exclude: ['src/store/lua.generated.ts', 'src/dashboard/assets.generated.ts', 'src/room/assets.generated.ts', 'src/cli/**'],
      // maxCols 0: no truncation of file names or line lists in CI logs (no terminal width there).
      reporter: ['text-summary', ['text', { skipFull: true, maxCols: 0 }]],
    },
    projects: [
      {
        test: {
          ...BUSY,
          name: 'unit',
          // Files share their worker's module cache (no file leaves global state behind; each
          // makes its own queues and stores): the core's modules load once per worker, not per file.
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [
            ...CLOCKED_PROJECT,
            ...SIMULATE_PROJECT,
            ...BOTS_PROJECT,
            ...REDIS_PROJECT,
            ...BUILT_PROJECT,
            ...RUNTIMES_PROJECT,
            'test/package/**',
            'test/faults/**',
            'test/**/*.e2e.test.ts',
          ],
        },
      },
      {
        test: {
          ...BUSY,
          name: 'bots',
          include: BOTS_PROJECT,
        },
      },
      {
        test: {
          ...BUSY,
          name: 'built',
          include: BUILT_PROJECT,
        },
      },
      {
        test: {
          ...BUSY,
          // Each file spawns its runtime's servers; the Next.js file builds the example once
          // (`next build`, the longest file: it starts first, beside the rest of the group).
          name: 'runtimes',
          include: RUNTIMES_PROJECT,
          testTimeout: 30_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          ...BUSY,
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          ...BUSY,
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          ...WAITING,
          name: 'clocked',
          isolate: false, // as `unit`: the adapters load once per worker
          include: CLOCKED_PROJECT,
        },
      },
      {
        test: {
          ...WAITING,
          name: 'simulate',
          include: SIMULATE_PROJECT,
        },
      },
      {
        test: {
          ...WAITING,
          name: 'redis',
          include: REDIS_PROJECT,
          // The contract suites on Redis run their tests side by side (StoreHarness.concurrent):
          // each test sleeps through real TTLs on a queue of its own.
          maxConcurrency: 6,
          globalSetup: ['test/support/global-redis.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          ...WAITING,
          // Fault and race tests: each file spawns (and kills, pauses, fills...) its own redis-server.
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
