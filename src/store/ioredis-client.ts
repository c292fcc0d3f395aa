// ScriptClient on ioredis (`Redis` or `Cluster`): the scripts are registered with
// defineCommand, so ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT.

import { scripts, type ScriptName } from './lua.generated.js';
import type { ScriptClient } from './script-client.js';

/**
 * The part of an ioredis `Redis` or `Cluster` that RedisStore uses. Declared here
 * so that users of the memory store alone need no ioredis types.
 */
export interface IoredisClientLike {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number; readOnly?: boolean }): void;
  info(section: string): Promise<string>;
  isCluster?: boolean;
  nodes?(role: 'master'): Array<{ info(section: string): Promise<string> }>;
  options?: { keyPrefix?: string } | object;
  /** ioredis emits `ready` after every (re)connection. */
  on?(event: 'ready', listener: () => void): unknown;
}

export function isIoredis(client: object): client is IoredisClientLike {
  return typeof (client as IoredisClientLike).defineCommand === 'function';
}

/**
 * Registers each script under a name carrying its hash, so two waitgate versions on
 * one client never collide.
 */
export function ioredisScriptClient(client: IoredisClientLike): ScriptClient {
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
  return {
    run: <R>(script: ScriptName, keys: readonly string[], args: ReadonlyArray<string | number>) => commands[script](...keys, ...args) as Promise<R>,
    async masters() {
      if (!client.isCluster || !client.nodes) return [client];
      const nodes = client.nodes('master');
      // A Cluster client that has not connected yet knows no nodes: check again on a later call.
      if (nodes.length === 0) throw new Error('the Redis Cluster client knows no master yet');
      return nodes;
    },
    onReady: (listener) => void client.on?.('ready', listener),
    unsupported: () =>
      (client.options as { keyPrefix?: string } | undefined)?.keyPrefix
        ? 'the ioredis keyPrefix option is not supported (it would move keys out of the hash tag); use the RedisStore prefix option instead'
        : null,
  };
}
