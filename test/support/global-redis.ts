// Global setup of the `redis` test project: one Redis for the contract suite.
// REDIS_URL when set; else a throwaway redis-server on a free port; else
// Testcontainers when a Docker engine answers; else a clear failure (chooseRedisSource).

import { spawnSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { hasRedisServerBinary, startRedisServer } from './redis-server.js';
import { chooseRedisSource } from './redis-source.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the Redis the contract suite runs on. */
    redisUrl: string;
    /** True when the tests started this server (and so may reconfigure it). */
    redisIsOurs: boolean;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const source = chooseRedisSource({
    env: process.env,
    hasBinary: hasRedisServerBinary,
    dockerAnswers: () => spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 }).status === 0,
  });
  switch (source.kind) {
    case 'url':
      project.provide('redisUrl', source.url);
      project.provide('redisIsOurs', false);
      return async () => {};
    case 'binary': {
      const server = await startRedisServer();
      project.provide('redisUrl', server.url);
      project.provide('redisIsOurs', true);
      return () => server.stop();
    }
    case 'docker': {
      // Loaded only here: Testcontainers takes about a second to import.
      const { RedisContainer } = await import('@testcontainers/redis');
      const container = await new RedisContainer('redis:7').start();
      project.provide('redisUrl', container.getConnectionUrl());
      project.provide('redisIsOurs', true);
      return async () => void (await container.stop());
    }
    case 'none':
      throw new Error(source.message);
  }
}
