// How the `redis` project's global setup picks its Redis: REDIS_URL, then the redis-server
// binary, then Docker, then a message; each probe asked only when the ones before said no.

import { describe, expect, it } from 'vitest';
import { chooseRedisSource, HOW_TO_GET_REDIS, type RedisSourceProbes } from './redis-source.js';

/** Probes that answer as told and record which were asked. */
function probes(env: Record<string, string | undefined>, binary: boolean, docker: boolean) {
  const asked: string[] = [];
  const given: RedisSourceProbes = {
    env,
    hasBinary: () => {
      asked.push('binary');
      return binary;
    },
    dockerAnswers: () => {
      asked.push('docker');
      return docker;
    },
  };
  return { given, asked };
}

describe('chooseRedisSource', () => {
  it('takes REDIS_URL first and probes nothing', () => {
    const { given, asked } = probes({ REDIS_URL: 'redis://10.0.0.5:6380' }, true, true);
    expect(chooseRedisSource(given)).toEqual({ kind: 'url', url: 'redis://10.0.0.5:6380' });
    expect(asked).toEqual([]);
  });

  it('treats an empty REDIS_URL as unset', () => {
    const { given } = probes({ REDIS_URL: '' }, true, false);
    expect(chooseRedisSource(given)).toEqual({ kind: 'binary' });
  });

  it('spawns redis-server when the binary exists, without asking Docker', () => {
    const { given, asked } = probes({}, true, true);
    expect(chooseRedisSource(given)).toEqual({ kind: 'binary' });
    expect(asked).toEqual(['binary']);
  });

  it('falls back to Docker when there is no binary', () => {
    const { given, asked } = probes({ PATH: '/usr/bin' }, false, true);
    expect(chooseRedisSource(given)).toEqual({ kind: 'docker' });
    expect(asked).toEqual(['binary', 'docker']);
  });

  it('says how to get a Redis when nothing works', () => {
    const { given, asked } = probes({}, false, false);
    const source = chooseRedisSource(given);
    expect(source).toEqual({ kind: 'none', message: HOW_TO_GET_REDIS });
    expect(asked).toEqual(['binary', 'docker']);
    expect(HOW_TO_GET_REDIS).toMatch(/redis-server/);
    expect(HOW_TO_GET_REDIS).toMatch(/REDIS_URL/);
    expect(HOW_TO_GET_REDIS).toMatch(/Docker/);
  });
});
