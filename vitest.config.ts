import { defineConfig } from 'vitest/config';

// `unit` needs nothing; `redis` gets a real redis-server from the global setup; `faults`
// spawns its own servers to break them; `e2e`
// drives the example shop in Debian's Chromium; `package` installs the packed tarball.
export default defineConfig({
  test: {
    // `npm test` (and CI) runs with --coverage: of src/ only, printed as a summary and a
    // table that lists the uncovered lines of each file not fully covered.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // src/cli/ runs as the built command in child processes (test/cli spawns dist/cli.js, as
      // a user runs it), which in-process coverage cannot see: counted, it would read 0%.
      exclude: ['src/store/lua.generated.ts', 'src/dashboard/assets.generated.ts', 'src/cli/**'],
      // maxCols 0: no truncation of file names or line lists in CI logs (no terminal width there).
      reporter: ['text-summary', ['text', { skipFull: true, maxCols: 0 }]],
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/store/redis-*.test.ts', 'test/package/**', 'test/faults/**', 'test/**/*.e2e.test.ts'],
        },
      },
      {
        test: {
          name: 'redis',
          include: ['test/store/redis-*.test.ts'],
          globalSetup: ['test/support/global-redis.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          // Fault and race tests: each file spawns (and kills, pauses, fills...) its own redis-server.
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
