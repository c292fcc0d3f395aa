// ScriptClient on node-redis (`redis` 5+): `createClient()` or `createCluster()`,
// through their raw `sendCommand`, so no node-redis type is needed here.

import { scripts, type ScriptName } from './lua.generated.js';
import type { ScriptClient } from './script-client.js';

type Args = string[];

/** The part of a node-redis client (`createClient()`) that RedisStore uses. */
export interface NodeRedisClientLike {
  sendCommand(args: Args): Promise<unknown>;
  on(event: 'ready', listener: () => void): unknown;
}

/** The part of a node-redis cluster (`createCluster()`) that RedisStore uses. */
export interface NodeRedisClusterLike {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: Args): Promise<unknown>;
  readonly masters: readonly object[];
  nodeClient(node: object): Promise<{ sendCommand(args: Args): Promise<unknown> }>;
  on(event: 'node-ready', listener: () => void): unknown;
}

export function isNodeRedis(client: object): client is NodeRedisClientLike | NodeRedisClusterLike {
  return typeof (client as { sendCommand?: unknown }).sendCommand === 'function' && typeof (client as { on?: unknown }).on === 'function';
}

function isCluster(client: NodeRedisClientLike | NodeRedisClusterLike): client is NodeRedisClusterLike {
  return Array.isArray((client as NodeRedisClusterLike).masters) && typeof (client as NodeRedisClusterLike).nodeClient === 'function';
}

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

export function nodeRedisScriptClient(client: NodeRedisClientLike | NodeRedisClusterLike): ScriptClient {
  const send = isCluster(client)
    ? (firstKey: string, readOnly: boolean, args: Args) => client.sendCommand(firstKey, readOnly, args)
    : (_firstKey: string, _readOnly: boolean, args: Args) => client.sendCommand(args);
  // Scripts sent whole once through this client: by SHA from then on (as ioredis does).
  const sent = new Set<ScriptName>();
  return {
    async run<R>(name: ScriptName, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<R> {
      const script = scripts[name];
      const rest = [String(keys.length), ...keys, ...args.map(String)];
      // A read-only script goes as EVALSHA_RO: a read command, so CLIENT PAUSE WRITE lets it
      // through even when the server does not know the script yet (it cannot read its flags).
      const [bySha, byText] = script.readOnly ? ['EVALSHA_RO', 'EVAL_RO'] : ['EVALSHA', 'EVAL'];
      if (!sent.has(name)) {
        const reply = (await send(keys[0]!, script.readOnly, [byText, script.lua, ...rest])) as R;
        sent.add(name);
        return reply;
      }
      try {
        return (await send(keys[0]!, script.readOnly, [bySha, script.sha1, ...rest])) as R;
      } catch (error) {
        // Unknown to this node (SCRIPT FLUSH, a failover, a new node): EVAL loads it too.
        if (!isNoScript(error)) throw error;
        return (await send(keys[0]!, script.readOnly, [byText, script.lua, ...rest])) as R;
      }
    },
    async masters() {
      const info = (node: { sendCommand(args: Args): Promise<unknown> }) => ({
        info: async (section: string) => String(await node.sendCommand(['INFO', section])),
      });
      if (!isCluster(client)) return [info(client)];
      if (client.masters.length === 0) throw new Error('the Redis Cluster client knows no master yet');
      return Promise.all(client.masters.map(async (master) => info(await client.nodeClient(master))));
    },
    onReady: (listener) => void (isCluster(client) ? client.on('node-ready', listener) : client.on('ready', listener)),
    unsupported: () => null,
  };
}
