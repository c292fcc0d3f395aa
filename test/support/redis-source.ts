// Where the `redis` test project gets its Redis, decided without touching the machine: the
// probes are passed in (and called lazily, in order), so the choice is unit-tested on its own.

/** Where the tests' Redis comes from. */
export type RedisSource =
  /** A server the user gave (REDIS_URL): used as is, never reconfigured. */
  | { kind: 'url'; url: string }
  /** A throwaway redis-server on a free port, spawned from the binary on PATH. */
  | { kind: 'binary' }
  /** A throwaway redis:7 container, through Testcontainers. */
  | { kind: 'docker' }
  /** Nothing works: `message` says how to get a Redis. */
  | { kind: 'none'; message: string };

export interface RedisSourceProbes {
  /** The environment; only REDIS_URL is read (an empty value counts as unset). */
  env: Readonly<Record<string, string | undefined>>;
  /** Whether redis-server is on PATH (asked only when REDIS_URL is unset). */
  hasBinary: () => boolean;
  /** Whether a Docker engine answers (asked only when there is no binary either). */
  dockerAnswers: () => boolean;
}

export const HOW_TO_GET_REDIS = [
  'waitgate tests need Redis 7 or newer. Any one of these works:',
  '  - install redis-server so it is on PATH (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis),',
  '  - set REDIS_URL=redis://host:port to a server the tests may write to (they never flush it),',
  '  - run a Docker engine (the tests start a redis:7 container through @testcontainers/redis).',
].join('\n');

/** REDIS_URL, else the redis-server binary, else Docker, else a message saying what to install. */
export function chooseRedisSource({ env, hasBinary, dockerAnswers }: RedisSourceProbes): RedisSource {
  const url = env.REDIS_URL;
  if (url) return { kind: 'url', url };
  if (hasBinary()) return { kind: 'binary' };
  if (dockerAnswers()) return { kind: 'docker' };
  return { kind: 'none', message: HOW_TO_GET_REDIS };
}
