// The two Redis client libraries RedisStore takes, behind one factory, so that a fault
// test is written once and runs on both. What they do with a command when the
// connection drops is where they differ (the per-client branches of the fault tests):
//
// - ioredis re-sends a command that was written to the closed connection and got no
//   reply (`autoResendUnfulfilledCommands`, on by default) once it has reconnected: a
//   script whose reply was lost runs twice, and the caller gets the second run's reply.
// - node-redis re-sends nothing that was written to a closed connection: the command
//   rejects ("Socket closed unexpectedly", or the socket's ECONNRESET), so the call
//   fails with StoreUnavailableError after the script ran once, and the caller retries.
//
// Both keep a command issued while disconnected in an offline queue and send it after
// the reconnection (late, if the caller has given up meanwhile), unless it is turned off:
// ioredis `enableOfflineQueue: false`, node-redis `disableOfflineQueue: true` (then the
// command fails at once). ioredis also drops a queued command after
// `maxRetriesPerRequest` failed reconnection attempts; node-redis keeps it.

import { Redis, type RedisOptions } from 'ioredis';
import { createClient, type RedisClientOptions } from 'redis';
import type { RedisClientLike } from '../../src/index.js';

export type ClientKind = 'ioredis' | 'node-redis';
export const CLIENT_KINDS: readonly ClientKind[] = ['ioredis', 'node-redis'];

export interface TestClientOptions {
  /** Keep commands issued while disconnected until the reconnection (both libraries' default), or fail them at once. */
  offlineQueue?: boolean;
  /** Milliseconds before reconnection attempt `attempt` (1, 2, ...). Default 20. */
  reconnectDelay?: (attempt: number) => number;
  /** Extra ioredis options (e.g. `maxRetriesPerRequest`). */
  ioredis?: RedisOptions;
}

/** One connected client of either library. */
export interface TestClient {
  readonly kind: ClientKind;
  /** The object RedisStore takes. */
  readonly client: RedisClientLike;
  /** `reconnecting` events so far (both libraries emit one per attempt). */
  readonly reconnects: number;
  /** Messages of the `error` events so far (resets, refused reconnection attempts). */
  readonly errors: readonly string[];
  /** Drops the connection for good, without waiting for replies. */
  close(): void;
}

/** A description of the client a test runs on, for describe.each. */
export interface ClientSetup {
  readonly kind: ClientKind;
  readonly label: string;
  readonly options?: TestClientOptions;
}

/** Connects a client of `kind` to `url` and waits until it is ready. Every client has an `error` listener. */
export async function connectClient(kind: ClientKind, url: string, options: TestClientOptions = {}): Promise<TestClient> {
  const delay = options.reconnectDelay ?? (() => 20);
  const offlineQueue = options.offlineQueue ?? true;
  const errors: string[] = [];
  let reconnects = 0;
  const onError = (error: Error) => void errors.push(error.message);
  const onReconnecting = () => void reconnects++;

  if (kind === 'ioredis') {
    const client = new Redis(url, { retryStrategy: delay, enableOfflineQueue: offlineQueue, lazyConnect: true, ...options.ioredis });
    client.on('error', onError);
    client.on('reconnecting', onReconnecting);
    await client.connect();
    return {
      kind,
      client,
      get reconnects() {
        return reconnects;
      },
      errors,
      close: () => client.disconnect(),
    };
  }

  // node-redis counts attempts from 0; ioredis from 1.
  const nodeOptions: RedisClientOptions = { url, disableOfflineQueue: !offlineQueue, socket: { reconnectStrategy: (retries) => delay(retries + 1) } };
  const client = createClient(nodeOptions);
  client.on('error', onError);
  client.on('reconnecting', onReconnecting);
  await client.connect();
  return {
    kind,
    client: client as unknown as RedisClientLike,
    get reconnects() {
      return reconnects;
    },
    errors,
    close: () => {
      if (client.isOpen) client.destroy();
    },
  };
}

/**
 * Script calls and failures from INFO commandstats: EVAL, EVALSHA and, as node-redis
 * sends read-only scripts, EVAL_RO and EVALSHA_RO. `failedCalls` counts NOSCRIPT and
 * error replies of a script of its own (both count as failed calls in Redis 7).
 */
export function scriptStats(commandstats: string): { scriptCalls: number; failedCalls: number; timeCalls: number } {
  const stat = (command: string, field: string) => Number(new RegExp(`^cmdstat_${command}:.*\\b${field}=(\\d+)`, 'm').exec(commandstats)?.[1] ?? 0);
  const sum = (field: string) => ['eval', 'evalsha', 'eval_ro', 'evalsha_ro'].reduce((total, command) => total + stat(command, field), 0);
  return { scriptCalls: sum('calls'), failedCalls: sum('failed_calls'), timeCalls: stat('time', 'calls') };
}

/** One count of INFO errorstats (e.g. `ERR`, `NOSCRIPT`). */
export function errorStat(errorstats: string, prefix: string): number {
  return Number(new RegExp(`^errorstat_${prefix}:count=(\\d+)`, 'm').exec(errorstats)?.[1] ?? 0);
}
