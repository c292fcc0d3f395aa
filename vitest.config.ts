import { defineConfig } from 'vitest/config';

// Three projects: `unit` needs nothing, `redis` gets a real redis-server from the
// global setup, `package` packs the tarball and installs it into a fresh project.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/store/redis-*.test.ts', 'test/package/**'],
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
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
