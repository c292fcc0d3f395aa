// Global setup of the `redis` test project: one Redis for the contract suite.
// REDIS_URL when set; else a throwaway redis-server on a free port; else
// Testcontainers when a Docker engine answers; else a clear failure.

import { spawnSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { hasRedisServerBinary, startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the Redis the contract suite runs on. */
    redisUrl: string;
    /** True when the tests started this server (and so may reconfigure it). */
    redisIsOurs: boolean;
  }
}

const HOW_TO_GET_REDIS = [
  'waitgate tests need Redis 7 or newer. Any one of these works:',
  '  - install redis-server so it is on PATH (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis),',
  '  - set REDIS_URL=redis://host:port to a server the tests may write to (they never flush it),',
  '  - run a Docker engine and `npm install --no-save @testcontainers/redis`.',
].join('\n');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.REDIS_URL) {
    project.provide('redisUrl', process.env.REDIS_URL);
    project.provide('redisIsOurs', false);
    return async () => {};
  }
  if (hasRedisServerBinary()) {
    const server = await startRedisServer();
    project.provide('redisUrl', server.url);
    project.provide('redisIsOurs', true);
    return () => server.stop();
  }
  if (spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 }).status === 0) {
    const moduleName = '@testcontainers/redis';
    const { RedisContainer } = (await import(moduleName).catch(() => {
      throw new Error(`${HOW_TO_GET_REDIS}\n(Docker answers, but ${moduleName} is not installed.)`);
    })) as { RedisContainer: new (image: string) => { start(): Promise<{ getConnectionUrl(): string; stop(): Promise<unknown> }> } };
    const container = await new RedisContainer('redis:7').start();
    project.provide('redisUrl', container.getConnectionUrl());
    project.provide('redisIsOurs', true);
    return async () => void (await container.stop());
  }
  throw new Error(HOW_TO_GET_REDIS);
}
