// The Lua scripts of lua/ registered on an ioredis client, and run by name.

import type { InfoClient } from './eviction-policy.js';
import { scripts, type ScriptName } from './lua.generated.js';

/**
 * The part of an ioredis `Redis` or `Cluster` that RedisStore uses. Declared here
 * so that users of the memory store alone need no ioredis types.
 */
export interface RedisClientLike extends InfoClient {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number; readOnly?: boolean }): void;
  options?: { keyPrefix?: string } | object;
  /** ioredis emits `ready` after every (re)connection. */
  on?(event: 'ready', listener: () => void): unknown;
}

/** Runs one script: its keys, then its arguments; resolves with the raw reply. */
export type ScriptRunner = <R>(script: ScriptName, keysAndArgs: Array<string | number>) => Promise<R>;

/**
 * Registers each script under a name carrying its hash, so two waitgate versions on
 * one client never collide; ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT
 * (after a SCRIPT FLUSH or a failover).
 */
export function registerScripts(client: RedisClientLike): ScriptRunner {
  const commands = {} as Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>;
  const methods = client as unknown as Record<string, unknown>;
  for (const [name, script] of Object.entries(scripts) as Array<[ScriptName, (typeof scripts)[ScriptName]]>) {
    const command = `waitgate_${name}_${script.sha1.slice(0, 12)}`;
    if (typeof methods[command] !== 'function') {
      client.defineCommand(command, { lua: script.lua, numberOfKeys: script.numberOfKeys, readOnly: script.readOnly });
    }
    const method = methods[command] as (...args: Array<string | number>) => Promise<unknown>;
    commands[name] = (...args) => method.apply(client, args);
  }
  return <R>(script: ScriptName, keysAndArgs: Array<string | number>) => commands[script](...keysAndArgs) as Promise<R>;
}
