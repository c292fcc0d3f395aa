// The seam between RedisStore and a Redis client library: run one of lua/'s scripts
// on the slot of its keys, read INFO of each master, hear of reconnections. One
// implementation per client (ioredis-client.ts, node-redis-client.ts), detected from
// the object the user passes.

import type { ScriptName } from './lua.generated.js';

/** What RedisStore needs of a client. */
export interface ScriptClient {
  /**
   * Runs a script by its SHA (EVALSHA), sending its text (EVAL) when the server does
   * not know it (NOSCRIPT: after SCRIPT FLUSH or a failover), on the node serving
   * `keys[0]`'s slot. Resolves with the raw reply (arrays of strings, integers, null).
   */
  run<R>(script: ScriptName, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<R>;
  /** One handle per master (a single node: itself); rejects when a Cluster client knows none yet. */
  masters(): Promise<Array<{ info(section: string): Promise<string> }>>;
  /** Calls `listener` after every (re)connection (of any node of a Cluster). */
  onReady(listener: () => void): void;
  /** A set-up that breaks the hash tags (ioredis `keyPrefix`): why, or null. */
  unsupported(): string | null;
}
