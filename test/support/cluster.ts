// Throwaway Redis Clusters on loopback, for tests that own (and may reshard or kill) them:
// a one-node cluster owning all 16384 slots (F20), and 3 masters + 3 replicas (F21).
// Every node is a startRedisServer process with its own data folder (nodes.conf lives
// there), a free client port and a free cluster-bus port (`cluster-port`: port + 10000
// may not exist for a high ephemeral port).

import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, startRedisServer, type RedisServer } from './redis-server.js';

export interface ClusterNode {
  readonly port: number;
  readonly busPort: number;
  readonly server: RedisServer;
  /** A plain (non-cluster) connection to this node, for admin commands. */
  readonly admin: Redis;
}

export interface ShardNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  health: string;
  replicationOffset: number;
}

/** One shard as `CLUSTER SHARDS` reports it. */
export interface Shard {
  /** Inclusive slot ranges. */
  slots: Array<[number, number]>;
  master: ShardNode | undefined;
  replicas: ShardNode[];
}

export interface TestCluster {
  readonly nodes: ClusterNode[];
  /** `{ host, port }` of every node, for `new Cluster(startupNodes)`. */
  readonly startupNodes: Array<{ host: string; port: number }>;
  node(port: number): ClusterNode;
  /** Nodes whose process is still running. */
  alive(): ClusterNode[];
  /** `CLUSTER SHARDS` as seen by a live node (by default the first one that answers). */
  shards(fromPort?: number): Promise<Shard[]>;
  /** The port of the master serving `slot`, per `CLUSTER SHARDS`. */
  masterOf(slot: number, fromPort?: number): Promise<number>;
  /** `CLUSTER KEYSLOT` of a key, asked of a live node. */
  keyslot(key: string): Promise<number>;
  /** Resolves once every live node reports cluster_state:ok and agrees that `slot` (if given) is on `masterPort`. */
  waitHealthy(options?: { timeoutMs?: number; slot?: number; masterPort?: number }): Promise<void>;
  /** Kills every node, closes the admin connections and removes every data folder. */
  stop(): Promise<void>;
}

// A node that never received a MEET (the one-node cluster) does not know its own address, and
// CLUSTER SLOTS would then report an empty host, which ioredis cannot connect to: announce it.
const CLUSTER_ARGS = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-announce-ip', '127.0.0.1'];

/** Parses `CLUSTER INFO` (or any `key:value` INFO text). */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return out;
}

/** Polls `check` until it returns true; throws with `what` (and the last error) after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** One cluster-enabled redis-server; retried when a picked port was taken meanwhile. */
async function startClusterNode(extraArgs: string[]): Promise<ClusterNode> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const busPort = await freePort();
    try {
      const server = await startRedisServer([...CLUSTER_ARGS, '--cluster-port', String(busPort), ...extraArgs]);
      if (server.port === busPort) {
        await server.stop();
        continue;
      }
      const admin = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
      admin.on('error', () => undefined); // a node killed on purpose
      return { port: server.port, busPort, server, admin };
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

function makeCluster(nodes: ClusterNode[]): TestCluster {
  const isAlive = (n: ClusterNode) => n.server.process.exitCode === null && n.server.process.signalCode === null;
  const alive = () => nodes.filter(isAlive);

  async function firstAnswering<T>(fromPort: number | undefined, run: (n: ClusterNode) => Promise<T>): Promise<T> {
    const candidates = fromPort === undefined ? alive() : nodes.filter((n) => n.port === fromPort);
    let lastError: unknown = new Error('no live node');
    for (const n of candidates) {
      try {
        return await run(n);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  async function shards(fromPort?: number): Promise<Shard[]> {
    const reply = await firstAnswering(fromPort, (n) => n.admin.call('CLUSTER', 'SHARDS') as Promise<unknown[]>);
    return reply.map((raw) => {
      const shard = toMap(raw as unknown[]);
      const flat = (shard.slots as Array<number | string>).map(Number);
      const slots: Array<[number, number]> = [];
      for (let i = 0; i < flat.length; i += 2) slots.push([flat[i]!, flat[i + 1]!]);
      const members = (shard.nodes as unknown[][]).map((m) => {
        const node = toMap(m);
        return {
          id: String(node.id),
          port: Number(node.port),
          role: node.role === 'master' ? 'master' : 'replica',
          health: String(node.health),
          replicationOffset: Number(node['replication-offset']),
        } satisfies ShardNode;
      });
      return { slots, master: members.find((m) => m.role === 'master'), replicas: members.filter((m) => m.role === 'replica') };
    });
  }

  async function masterOf(slot: number, fromPort?: number): Promise<number> {
    for (const shard of await shards(fromPort)) {
      if (shard.master && shard.slots.some(([a, b]) => slot >= a && slot <= b)) return shard.master.port;
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  return {
    nodes,
    get startupNodes() {
      return nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
    },
    node(port) {
      const n = nodes.find((x) => x.port === port);
      if (!n) throw new Error(`no node on port ${port}`);
      return n;
    },
    alive,
    shards,
    masterOf,
    async keyslot(key) {
      return Number(await firstAnswering(undefined, (n) => n.admin.call('CLUSTER', 'KEYSLOT', key) as Promise<number>));
    },
    async waitHealthy({ timeoutMs = 30_000, slot, masterPort } = {}) {
      await waitUntil(
        'cluster_state:ok on every live node',
        async () => {
          for (const n of alive()) {
            const info = parseInfo(String(await n.admin.call('CLUSTER', 'INFO')));
            if (info.cluster_state !== 'ok' || info.cluster_slots_ok !== '16384') return false;
            if (slot !== undefined && masterPort !== undefined && (await masterOf(slot, n.port)) !== masterPort) return false;
          }
          return true;
        },
        timeoutMs,
      );
    },
    async stop() {
      for (const n of nodes) n.admin.disconnect();
      await Promise.all(nodes.map((n) => n.server.stop()));
    },
  };
}

/** A flat RESP2 [k1, v1, k2, v2, ...] array as an object. */
function toMap(flat: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = flat[i + 1];
  return out;
}

/**
 * A one-node cluster: `cluster-enabled yes`, `CLUSTER ADDSLOTSRANGE 0 16383`, then
 * waits for cluster_state:ok. What CI can afford, and enough to enforce the slot rules.
 */
export async function startOneNodeCluster(extraArgs: string[] = []): Promise<TestCluster> {
  const node = await startClusterNode(extraArgs);
  const cluster = makeCluster([node]);
  try {
    await node.admin.call('CLUSTER', 'ADDSLOTSRANGE', 0, 16383);
    await cluster.waitHealthy({ timeoutMs: 15_000 });
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/**
 * `masters` masters with `replicasPerMaster` replicas each, made by
 * `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`. Resolves once
 * every node reports cluster_state:ok, knows every other node, and every replica's
 * link to its master is up and synced.
 */
export async function startCluster(
  options: { masters?: number; replicasPerMaster?: number; nodeTimeoutMs?: number; extraArgs?: string[] } = {},
): Promise<TestCluster> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1000, extraArgs = [] } = options;
  const total = masters * (1 + replicasPerMaster);
  const args = ['--cluster-node-timeout', String(nodeTimeoutMs), ...extraArgs];
  const started: ClusterNode[] = [];
  const cluster = makeCluster(started);
  try {
    // Sequentially: parallel freePort() calls could hand out one port twice.
    for (let i = 0; i < total; i++) started.push(await startClusterNode(args));
    await redisCli(
      ['--cluster', 'create', ...started.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
      60_000,
    );
    await cluster.waitHealthy({ timeoutMs: 30_000 });
    await waitUntil(
      'every node to know every other and every replica to be in sync',
      async () => {
        for (const n of started) {
          const info = parseInfo(String(await n.admin.call('CLUSTER', 'INFO')));
          if (Number(info.cluster_known_nodes) !== total) return false;
          const repl = parseInfo(await n.admin.info('replication'));
          if (repl.role === 'slave' && (repl.master_link_status !== 'up' || repl.master_sync_in_progress !== '0')) return false;
        }
        const shards = await cluster.shards();
        return shards.length === masters && shards.every((s) => s.master && s.replicas.length === replicasPerMaster);
      },
      30_000,
    );
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** Runs redis-cli; rejects with its output on a non-zero exit or after `timeoutMs`. */
export function redisCli(args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-cli ${args.join(' ')} timed out after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`redis-cli ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Moves one slot from its master to `toPort` by hand, the way `redis-cli --cluster
 * reshard` does, but one key per MIGRATE with `pauseMs` between keys, so that callers
 * meet the slot half-migrated (ASK, and TRYAGAIN for multi-key scripts) for a while.
 * Returns the number of keys moved.
 */
export async function migrateSlot(cluster: TestCluster, slot: number, toPort: number, pauseMs = 50): Promise<number> {
  const fromPort = await cluster.masterOf(slot);
  if (fromPort === toPort) throw new Error(`slot ${slot} is already on ${toPort}`);
  const source = cluster.node(fromPort).admin;
  const target = cluster.node(toPort).admin;
  const sourceId = String(await source.call('CLUSTER', 'MYID'));
  const targetId = String(await target.call('CLUSTER', 'MYID'));
  await target.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId);
  await source.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
  let moved = 0;
  for (;;) {
    const keys = (await source.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[];
    if (keys.length === 0) break;
    await source.call('MIGRATE', '127.0.0.1', toPort, '', 0, 5000, 'KEYS', ...keys);
    moved += keys.length;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  // Target first, then the source, then everybody else (as redis-cli does).
  await target.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
  await source.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
  for (const n of cluster.alive()) {
    if (n.port !== fromPort && n.port !== toPort) await n.admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId).catch(() => undefined);
  }
  return moved;
}
