// The connection of one command: where to (flags and REDIS_URL), ioredis loaded on demand
// (an optional peer: --help and usage errors work without it), set to fail fast, and a
// WaitingQueue on a RedisStore through which every read and write goes.

import type { Cluster, Redis } from 'ioredis';
import { QUEUE_NAME } from '../options.js';
import { RedisStore } from '../store/redis-store.js';
import type { StoredControls } from '../store/store.js';
import { withTimeout } from '../store/with-timeout.js';
import { WaitingQueue } from '../waiting-queue.js';
import { CommandFailure, UsageError } from './errors.js';
import type { Values } from './args.js';

/** The queue's default `operationTimeoutMs`: every call, and the connection, is bounded by it. */
export const TIMEOUT_MS = 1000;

/** Where a command goes. */
export interface Target {
  url: URL;
  /** The database number of the URL's path (0 without one). */
  db: number;
  cluster: boolean;
  name: string;
  prefix: string | undefined;
}

/** An open connection to one queue. */
export interface Connection {
  readonly queue: WaitingQueue;
  readonly name: string;
  readonly prefix: string;
  /** The controls as stored (null for fields never set), bounded like every queue call. */
  storedControls(): Promise<StoredControls>;
  /** Why calls fail now, when the client knows (the connection is down and being re-made); null when connected. */
  connectionProblem(): string | null;
  close(): void;
}

const PREFIX = /^[A-Za-z0-9._-]{1,64}$/;
const NAME_RULE = 'must be 1-64 characters of A-Z a-z 0-9 . _ -';

/**
 * The target of a queue command, from the flags and `REDIS_URL`.
 * @throws {@link UsageError} when --queue or the URL is missing or malformed.
 */
export function resolveTarget(values: Values, env: NodeJS.ProcessEnv, command: string): Target {
  const name = values.queue;
  if (typeof name !== 'string') throw new UsageError('missing --queue <name>', command);
  if (!QUEUE_NAME.test(name)) throw new UsageError(`--queue: ${NAME_RULE}`, command);
  const prefix = values.prefix;
  if (typeof prefix === 'string' && !PREFIX.test(prefix)) throw new UsageError(`--prefix: ${NAME_RULE}`, command);
  const raw = typeof values.redis === 'string' ? values.redis : env.REDIS_URL;
  if (raw === undefined || raw === '') throw new UsageError('missing --redis <url> (or REDIS_URL)', command);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError('--redis: not a URL (redis://host:port or rediss://host:port)', command);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new UsageError(`--redis: ${url.protocol}// is not redis:// or rediss://`, command);
  // The database, as Redis numbers them: the URL's path (/3), 0 without one.
  const path = url.pathname.replace(/^\/+/, '');
  if (path !== '' && !/^\d{1,5}$/.test(path)) throw new UsageError(`--redis: the database '${path}' is not a number (redis://host:port/3)`, command);
  const db = path === '' ? 0 : Number(path);
  if (db !== 0 && values.cluster === true) throw new UsageError(`--redis: a Redis Cluster has only database 0, not ${db}`, command);
  return { url, db, cluster: values.cluster === true, name, prefix: typeof prefix === 'string' ? prefix : undefined };
}

/** The URL without credentials, for messages. */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/**
 * Connects (within {@link TIMEOUT_MS}) and opens the queue.
 * @param reconnect - keep reconnecting after a connection is lost (watch); otherwise a
 *   lost connection makes the next call fail.
 * @throws {@link CommandFailure} when ioredis is missing or Redis cannot be reached.
 */
export async function connect(target: Target, { reconnect = false } = {}): Promise<Connection> {
  const ioredis = await loadIoredis();
  let connected = false;
  const retry = (times: number) => (connected && reconnect ? Math.min(times * 250, 2000) : null);
  const { url } = target;
  const auth = {
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    ...(url.protocol === 'rediss:' ? { tls: { servername: url.hostname } } : {}),
  };
  let client: Redis | Cluster;
  let nodeError: Error | undefined;
  let lastError: Error | undefined;
  if (target.cluster) {
    const cluster = new ioredis.Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: retry,
      slotsRefreshTimeout: TIMEOUT_MS,
      redisOptions: { ...auth, connectTimeout: TIMEOUT_MS, maxRetriesPerRequest: 1 },
    });
    cluster.on('node error', (error: Error) => (nodeError = error));
    client = cluster;
  } else {
    // The database is selected below, where a refusal is seen: ioredis's own SELECT on
    // connect fails silently and leaves the connection on database 0.
    const withoutDb = new URL(url.href);
    withoutDb.pathname = '';
    client = new ioredis.Redis(withoutDb.href, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: TIMEOUT_MS,
      retryStrategy: retry,
    });
  }
  // ioredis emits 'error' on every failed attempt: without a listener each would be printed.
  client.on('error', (error: Error) => (lastError = error));

  const where = describeUrl(url);
  try {
    await withDeadline(client.connect(), TIMEOUT_MS, () => new CommandFailure(`no answer from ${where} within ${TIMEOUT_MS} ms`));
  } catch (error) {
    client.disconnect();
    if (error instanceof CommandFailure) throw error;
    const cause = nodeError ?? lastError ?? error;
    throw new CommandFailure(`cannot connect to ${where}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  if (target.db !== 0 && client instanceof ioredis.Redis) {
    try {
      // Also re-selected by ioredis after a reconnection (watch): it remembers a successful SELECT.
      await withDeadline(client.select(target.db), TIMEOUT_MS, () => new CommandFailure(`no answer from ${where} within ${TIMEOUT_MS} ms`));
    } catch (error) {
      client.disconnect();
      if (error instanceof CommandFailure) throw error;
      throw new UsageError(`--redis: the database ${target.db} cannot be selected on ${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  connected = true;

  let store: RedisStore;
  let queue: WaitingQueue;
  try {
    store = new RedisStore({ client, ...(target.prefix === undefined ? {} : { prefix: target.prefix }) });
    // The rate is a placeholder: the command never admits, and a control never set is shown
    // as the instances' option, never as this value. No presence tracking: reads are no sign of life.
    queue = new WaitingQueue({ store, name: target.name, admitRatePerSecond: 1, abandonAfterSeconds: null, operationTimeoutMs: TIMEOUT_MS });
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return {
    queue,
    name: target.name,
    prefix: store.prefix,
    storedControls: () => withTimeout('controls', TIMEOUT_MS, () => store.controls(target.name)),
    connectionProblem: () =>
      client.status === 'ready' ? null : `the connection to ${where} is lost (${lastError?.message ?? client.status})${reconnect ? '; reconnecting' : ''}`,
    close: () => client.disconnect(),
  };
}

async function loadIoredis(): Promise<{ Redis: typeof Redis; Cluster: typeof Cluster }> {
  try {
    return await import('ioredis');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new CommandFailure('this command needs the ioredis package (npm install ioredis)', { cause: error });
    }
    throw error;
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
