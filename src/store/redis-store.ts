// RedisStore: every state change is one Lua script from lua/, registered with ioredis defineCommand.

import { z } from 'zod';
import { QueueStateLostError, WaitgateConfigError } from '../errors.js';
import { parseStrict } from '../options.js';
import type {
  AdmissionWindow,
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  ConsumeRequest,
  MemberSnapshot,
  QueueSnapshot,
  SettleRequest,
  StatsSnapshot,
  Store,
  StoreWarning,
} from '../types.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { scripts, type ScriptName } from './lua.generated.js';
import { CLAIM_STATUS, POSITION_STATUS } from './status-codes.js';

/**
 * The part of an ioredis `Redis` or `Cluster` that RedisStore uses. Declared here
 * so that users of the memory store alone need no ioredis types.
 */
export interface RedisClientLike {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number; readOnly?: boolean }): void;
  info(section: string): Promise<string>;
  options?: { keyPrefix?: string } | object;
  isCluster?: boolean;
  nodes?(role: 'master'): Array<{ info(section: string): Promise<string> }>;
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster`. Set `commandTimeout` and `maxRetriesPerRequest: 1` on it for fast failure. */
  client: RedisClientLike;
  /** First part of every key's hash tag, `{<prefix>:<queue>}`. 1–64 of `[A-Za-z0-9._-]`. Default `'waitgate'`. */
  prefix?: string;
}

const optionsSchema = z.strictObject({
  client: z.custom<RedisClientLike>(
    (c) => typeof c === 'object' && c !== null && typeof (c as RedisClientLike).defineCommand === 'function',
    'must be an ioredis Redis or Cluster client',
  ),
  prefix: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 . _ -').default('waitgate'),
});

type Reply = Array<string | number | null>;

/** lua/includes/generation.lua: the queue's state vanished. */
const STATE_LOST = -1;

/**
 * A {@link Store} on Redis 7+ (single node or Cluster) through ioredis. Every
 * operation is one atomic Lua script using Redis `TIME`; a queue's keys share the
 * hash tag `{<prefix>:<name>}`. Scripts are loaded with EVALSHA and re-sent with
 * EVAL after a `SCRIPT FLUSH` or failover (ioredis handles NOSCRIPT).
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * const store = new RedisStore({ client: new Redis({ maxRetriesPerRequest: 1, commandTimeout: 1000 }) });
 * ```
 * @throws {@link WaitgateConfigError} for a bad option, or a client with `keyPrefix` set.
 */
export class RedisStore implements Store {
  readonly prefix: string;
  readonly #client: RedisClientLike;
  readonly #commands: Record<ScriptName, string>;
  readonly #keys = new Map<string, QueueKeys>();
  /** The generation of each queue as this instance last saw it (see lua/includes/generation.lua). */
  readonly #generations = new Map<string, string>();
  #warnings: Promise<StoreWarning[]> | undefined;
  /** Redis TIME minus performance.now(), a lower bound learned from replies (see #observeTime). */
  #redisOffset: number | undefined;
  #offsetLearnedAt = 0;
  #lastReplyAt = 0;

  constructor(options: RedisStoreOptions) {
    const parsed = parseStrict(optionsSchema, options);
    const keyPrefix = (parsed.client.options as { keyPrefix?: string } | undefined)?.keyPrefix;
    if (keyPrefix) {
      throw new WaitgateConfigError('client', 'the ioredis keyPrefix option is not supported (it would move keys out of the hash tag); use the RedisStore prefix option instead');
    }
    this.#client = parsed.client;
    this.prefix = parsed.prefix;
    this.#commands = defineScripts(parsed.client);
  }

  async enter(queue: string, memberId: string, options: { notAfter?: number } = {}): Promise<MemberSnapshot> {
    const k = this.#keysOf(queue);
    // The caller's deadline on Redis's clock (a lower bound, so never later than the real one);
    // '' until a reply has told us Redis's time.
    const notAfter = options.notAfter !== undefined && this.#redisOffset !== undefined ? Math.floor(options.notAfter + this.#redisOffset) : '';
    return this.#snapshot(queue, await this.#run<Reply>(queue, 'enterIfAbsent', [k.waiting, k.tokens, k.active, k.leases, k.meta], [memberId, notAfter]));
  }

  async position(queue: string, memberId: string): Promise<MemberSnapshot> {
    const k = this.#keysOf(queue);
    return this.#snapshot(queue, await this.#run<Reply>(queue, 'position', [k.waiting, k.tokens, k.meta], [memberId]));
  }

  async admit(queue: string, request: AdmitRequest): Promise<AdmitResult> {
    const k = this.#keysOf(queue);
    const reply = await this.#run<Reply>(queue, 'popAndIssue', [k.waiting, k.tokens, k.active, k.leases, k.meta, k.admits], [
      request.ratePerSecond,
      request.burst,
      request.maxActive ?? -1,
      request.tokenTtlMs,
      request.windowMs,
      request.admitId,
      ...request.tokens,
    ]);
    this.#learn(queue, reply[2]);
    const members = reply.slice(3).map(String);
    return {
      expiresAt: Number(reply[0]),
      active: Number(reply[1]),
      admitted: members.map((memberId, i) => ({ memberId, entryToken: request.tokens[i]! })),
    };
  }

  async claim(queue: string, request: ClaimRequest): Promise<ClaimResult> {
    const k = this.#keysOf(queue);
    const reply = await this.#run<Reply>(queue, 'claimToken', [k.tokens, k.active, k.leases, k.meta], [request.memberId, request.token, request.claimId, request.leaseMs]);
    const status = CLAIM_STATUS[Number(reply[0])];
    if (status === 'CLAIMED') return { status, expiresAt: Number(reply[1]) };
    if (status === 'INVALID' || status === 'IN_USE') return { status };
    throw new Error(`claimToken replied with an unknown status ${String(reply[0])}`);
  }

  async consume(queue: string, request: ConsumeRequest): Promise<boolean> {
    const k = this.#keysOf(queue);
    return (await this.#run<number>(queue, 'consume', [k.tokens, k.active, k.leases, k.consumed, k.meta], [request.memberId, request.claimId, request.rememberMs])) === 1;
  }

  async release(queue: string, request: SettleRequest): Promise<boolean> {
    const k = this.#keysOf(queue);
    return (await this.#run<number>(queue, 'release', [k.tokens, k.active, k.leases, k.meta], [request.memberId, request.claimId])) === 1;
  }

  async leave(queue: string, memberId: string): Promise<boolean> {
    const k = this.#keysOf(queue);
    return (await this.#run<number>(queue, 'leave', [k.waiting, k.tokens, k.active, k.leases, k.meta], [memberId])) === 1;
  }

  async stats(queue: string): Promise<StatsSnapshot> {
    const k = this.#keysOf(queue);
    const r = await this.#run<Reply>(queue, 'stats', [k.waiting, k.active, k.leases, k.meta], []);
    this.#learn(queue, r[8]);
    this.#observeTime(r[3]);
    return { waiting: Number(r[0]), active: Number(r[1]), claimed: Number(r[2]), now: Number(r[3]), window: decodeWindow(r, 4) };
  }

  async queueSnapshot(queue: string): Promise<QueueSnapshot> {
    const k = this.#keysOf(queue);
    const r = await this.#run<Reply>(queue, 'queueSnapshot', [k.waiting, k.meta], []);
    this.#learn(queue, r[8]);
    const seq = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
    return {
      totalWaiting: Number(r[0]),
      headSeq: seq(r[1]),
      lastSeq: seq(r[2]),
      now: Number(r[3]),
      window: decodeWindow(r, 4),
      probes: decodeProbes(r, 9),
    };
  }

  /**
   * Checks once that every Redis node evicts nothing (`maxmemory-policy noeviction`):
   * an evicted queue key loses members. Reads `INFO memory`, which a least-privilege ACL user may run.
   */
  warnings(): Promise<StoreWarning[]> {
    // A failed check (Redis unreachable) is not remembered: the next queue call checks again.
    this.#warnings ??= checkEvictionPolicy(this.#client).catch((error: unknown) => {
      this.#warnings = undefined;
      throw error;
    });
    return this.#warnings;
  }

  /** The keys of one queue; `queue` was validated by WaitingQueue. */
  #keysOf(queue: string): QueueKeys {
    let keys = this.#keys.get(queue);
    if (!keys) this.#keys.set(queue, (keys = queueKeys(this.prefix, queue)));
    return keys;
  }

  /**
   * After an operator has looked at why a queue's state vanished: accept what the
   * store holds now for `queue` (possibly nothing) on this instance.
   */
  async acceptCurrentState(queue: string): Promise<void> {
    this.#generations.delete(queue);
  }

  /**
   * Runs one script with the queue's known generation first in ARGV; `R` is its
   * reply shape, as its header documents. A STATE_LOST reply throws.
   */
  async #run<R extends Reply | number>(queue: string, script: ScriptName, keys: string[], args: Array<string | number>): Promise<R> {
    const command = (this.#client as unknown as Record<string, (...a: Array<string | number>) => Promise<R>>)[this.#commands[script]]!;
    const reply = await command.call(this.#client, ...keys, this.#generations.get(queue) ?? '', ...args);
    this.#lastReplyAt = performance.now();
    if (reply === STATE_LOST || (Array.isArray(reply) && reply.length === 1 && reply[0] === STATE_LOST)) {
      throw new QueueStateLostError(queue);
    }
    return reply;
  }

  /** Remembers the generation a reply carried: from now on, its disappearance is detected. */
  #learn(queue: string, generation: string | number | null | undefined): void {
    if (typeof generation === 'string' && generation !== '') this.#generations.set(queue, generation);
  }

  #snapshot(queue: string, reply: Reply): MemberSnapshot {
    this.#learn(queue, reply[11]);
    this.#observeTime(reply[5]);
    return decodeSnapshot(reply);
  }

  /**
   * A script ran at Redis time `now` before we read its reply, so now - (reply time) is a
   * lower bound of Redis TIME - performance.now(). Keep the tightest one, decayed by
   * 1 ms/s so that it stays a lower bound while the clocks drift (NTP slews at most 0.5 ms/s).
   */
  #observeTime(now: string | number | null | undefined): void {
    const redisNow = Number(now);
    if (!Number.isFinite(redisNow) || redisNow <= 0) return;
    const at = this.#lastReplyAt;
    const bound = redisNow - at;
    const decayed = this.#redisOffset === undefined ? -Infinity : this.#redisOffset - (at - this.#offsetLearnedAt) / 1000;
    this.#redisOffset = Math.max(bound, decayed);
    this.#offsetLearnedAt = at;
  }
}

/** Registers each script under a name carrying its hash, so two waitgate versions on one client never collide. */
function defineScripts(client: RedisClientLike): Record<ScriptName, string> {
  const names = {} as Record<ScriptName, string>;
  for (const [name, script] of Object.entries(scripts) as Array<[ScriptName, (typeof scripts)[ScriptName]]>) {
    const command = `waitgate_${name}_${script.sha1.slice(0, 12)}`;
    if (typeof (client as unknown as Record<string, unknown>)[command] !== 'function') {
      client.defineCommand(command, { lua: script.lua, numberOfKeys: script.numberOfKeys, readOnly: script.readOnly });
    }
    names[name] = command;
  }
  return names;
}

function decodeSnapshot(r: Reply): MemberSnapshot {
  const status = POSITION_STATUS[Number(r[0])];
  if (!status) throw new Error(`position replied with an unknown status ${String(r[0])}`);
  return {
    status,
    rank: r[1] === null ? null : Number(r[1]),
    totalWaiting: Number(r[2]),
    entryToken: r[3] === null ? null : String(r[3]),
    entryTokenExpiresAt: r[4] === null ? null : Number(r[4]),
    now: Number(r[5]),
    window: decodeWindow(r, 6),
    seq: r[10] === null || r[10] === undefined ? null : Number(r[10]),
  };
}

/** The (rank, seq) pairs from `at` to the end of a queueSnapshot reply. */
function decodeProbes(r: Reply, at: number): Array<{ rank: number; seq: number }> {
  const probes: Array<{ rank: number; seq: number }> = [];
  for (let i = at; i + 1 < r.length; i += 2) probes.push({ rank: Number(r[i]), seq: Number(r[i + 1]) });
  return probes;
}

function decodeWindow(r: Reply, at: number): AdmissionWindow {
  const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return { start: num(r[at]), current: num(r[at + 1]) ?? 0, previous: num(r[at + 2]) ?? 0, first: num(r[at + 3]) };
}

async function checkEvictionPolicy(client: RedisClientLike): Promise<StoreWarning[]> {
  const nodes = client.isCluster && client.nodes ? client.nodes('master') : [client];
  // A Cluster client that has not connected yet knows no nodes: check again on a later call.
  if (nodes.length === 0) throw new Error('the Redis Cluster client knows no master yet');
  const warnings: StoreWarning[] = [];
  for (const node of nodes) {
    let policy: string | undefined;
    try {
      policy = /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1];
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (!/NOPERM/i.test(reason)) throw error; // unreachable: check again later
      warnings.push({ code: 'EVICTION_POLICY_UNKNOWN', message: `Could not read maxmemory-policy (INFO memory failed: ${reason}); waitgate needs noeviction.` });
      continue;
    }
    if (policy !== undefined && policy !== 'noeviction') {
      warnings.push({
        code: 'EVICTION_POLICY',
        message: `Redis maxmemory-policy is "${policy}": Redis may evict waitgate's keys and lose waiting members. Set maxmemory-policy noeviction.`,
      });
    }
  }
  return warnings;
}
