// RedisStore: every operation is one Lua script from lua/. This file maps the Store
// methods onto the scripts' keys and arguments; the client libraries behind one seam
// (script-client.ts: ioredis-client.ts, node-redis-client.ts), reply decoding (redis-replies.ts), generations (generations.ts), Redis's clock
// (redis-clock.ts) and the eviction check (eviction-policy.ts) live beside it.

import { decodeCohortPage, decodeControls, decodeSetControls, encodeControlsPatch, encodeLimits } from './redis-controls.js';
import { z } from 'zod';
import { QueueStateLostError, WaitgateConfigError } from '../errors.js';
import { parseStrict } from '../options.js';
import { encodeEnters, enterArgs, type EnterArgs } from './enter-batch.js';
import { decodeLogEntry, type ControlsLogEntry } from '../controls-log.js';
import { checkEvictionPolicy } from './eviction-policy.js';
import { Generations } from './generations.js';
import { GroupCommit, type BatchReply } from './group-commit.js';
import { HeadMovesChannels, forGeneration, headMovesChannel, isSubscriber, type SubscriberLike } from './head-moves.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { formatLanes } from '../lanes.js';
import type { ScriptName } from './lua.generated.js';
import { RedisClock } from './redis-clock.js';
import {
  decodeCompactPosition,
  decodeAdmit,
  decodeClaim,
  decodePosition,
  decodeQueueSnapshot,
  decodeInspect,
  decodeStats,
  decodeEnterBatch,
  isStateLost,
  settle,
  decodeRevokedAt,
  type EnterBatchReply,
  type Reply,
} from './redis-replies.js';
import { ioredisScriptClient, isIoredis, type IoredisClientLike } from './ioredis-client.js';
import { isNodeRedis, nodeRedisScriptClient, type NodeRedisClientLike, type NodeRedisClusterLike } from './node-redis-client.js';
import type { ScriptClient } from './script-client.js';
import type {
  AddCodesRequest,
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  ConsumeRequest,
  ControlsRequest,
  EnterOptions,
  HeadMovesListener,
  HeadMovesWatch,
  MemberSnapshot,
  QueueSnapshot,
  ReleaseRequest,
  StatsSnapshot,
  Store,
  StoreWarning,
  StoredControls,
  CohortPage,
} from './store.js';
import type { MemberInspection } from '../types.js';

/**
 * A client RedisStore takes: an ioredis `Redis` or `Cluster`, or a node-redis (`redis`
 * 5+) client from `createClient()` or cluster from `createCluster()`. Declared
 * structurally, so users of the memory store alone need no client types.
 */
export type RedisClientLike = IoredisClientLike | NodeRedisClientLike | NodeRedisClusterLike;
export type { IoredisClientLike, NodeRedisClientLike, NodeRedisClusterLike };

/** The seam of each client object (one per client, however many stores share it). */
const seams = new WeakMap<object, { scripts: ScriptClient; clocks: Set<RedisClock> }>();

/** The client's seam; a new connection may reach another node (a failover) with another clock: its clocks learn it again. */
function seamOf(client: RedisClientLike): { scripts: ScriptClient; clocks: Set<RedisClock> } {
  let seam = seams.get(client);
  if (!seam) {
    const clocks = new Set<RedisClock>();
    const scripts = isIoredis(client) ? ioredisScriptClient(client) : nodeRedisScriptClient(client as NodeRedisClientLike | NodeRedisClusterLike);
    scripts.onReady(() => {
      for (const c of clocks) c.reset();
    });
    seam = { scripts, clocks };
    seams.set(client, seam);
  }
  return seam;
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` (set `commandTimeout` and `maxRetriesPerRequest: 1`
   * for fast failure), or a node-redis `createClient()` / `createCluster()` (connected,
   * with an `error` listener; see the README for its options).
   */
  client: RedisClientLike;
  /** First part of every key's hash tag, `{<prefix>:<queue>}`. 1–64 of `[A-Za-z0-9._-]`. Default `'waitgate'`. */
  prefix?: string;
  /**
   * Group commit (default on): the `enter`s, exact `position` look-ups and claims of
   * this instance for one queue that reach the store in the same turn of the event
   * loop share one script call, each caller keeping its own result, error and
   * deadline. A call made while none of its kind is in flight is sent at once, alone,
   * so a lone caller waits no longer than without it. `false` sends every call alone;
   * `{ maxBatchSize }` (1–256) bounds the members per script call (default 128 for
   * enters, 64 for look-ups and claims).
   */
  groupCommit?: boolean | { maxBatchSize?: number };
  /**
   * A second connection, used only to subscribe: `client.duplicate()` (ioredis), or a
   * connected `client.duplicate()` (node-redis). With it, after every admission step
   * (of any instance) the position cache (`positionCache`) hears at once how many
   * members left the head, so estimated ranks fall with each step instead of with
   * the pace of the head since its last snapshot. Stores may share one. You close it
   * with the client. Needs the channels `{<prefix>:*` in an ACL (see the README). Default: none.
   */
  subscriber?: SubscriberLike;
}

/** Members per script call with group commit on, unless `groupCommit.maxBatchSize` says otherwise: enters, and the others. */
export const DEFAULT_MAX_ENTER_BATCH_SIZE = 128;
export const DEFAULT_MAX_BATCH_SIZE = 64;
/** The most members one script call takes (MAX_BATCH in lua/enterIfAbsent-10.lua, position-4.lua, claimToken-4.lua). */
const MAX_BATCH_SIZE = 256;

const optionsSchema = z
  .strictObject({
    client: z.custom<RedisClientLike>(
      (c) => typeof c === 'object' && c !== null && (isIoredis(c) || isNodeRedis(c)),
      'must be an ioredis Redis or Cluster, or a node-redis client (createClient) or cluster (createCluster)',
    ),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 . _ -')
      .default('waitgate'),
    groupCommit: z.union([z.boolean(), z.strictObject({ maxBatchSize: z.number().int().min(1).max(MAX_BATCH_SIZE).optional() })]).default(true),
    subscriber: z
      .custom<SubscriberLike>(isSubscriber, 'must be an ioredis Redis or Cluster, or a node-redis client or cluster, of its own (client.duplicate())')
      .optional(),
  })
  .refine((o) => o.subscriber === undefined || (o.subscriber as object) !== o.client, {
    path: ['subscriber'],
    message: 'must be a connection of its own, not the client (a subscribed connection runs no script): client.duplicate()',
  });

/**
 * A {@link Store} on Redis 7+ (single node or Cluster) through ioredis or node-redis
 * (`redis` 5+), told apart from the client passed. Every operation is one atomic Lua
 * script using Redis `TIME`; a queue's keys share the hash tag `{<prefix>:<name>}`.
 * Scripts run by EVALSHA and are sent whole again with EVAL after a `SCRIPT FLUSH` or
 * failover (NOSCRIPT).
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
  readonly #scripts: ScriptClient;
  readonly #keys = new Map<string, QueueKeys>();
  readonly #generations = new Generations();
  readonly #clock = new RedisClock();
  readonly #enters: GroupCommit<EnterArgs, MemberSnapshot>;
  readonly #positions: GroupCommit<string, MemberSnapshot>;
  readonly #claims: GroupCommit<ClaimRequest, ClaimResult>;
  readonly #headMoves: HeadMovesChannels | null;
  #warnings: Promise<StoreWarning[]> | undefined;

  constructor(options: RedisStoreOptions) {
    const parsed = parseStrict(optionsSchema, options);
    const seam = seamOf(parsed.client);
    const unsupported = seam.scripts.unsupported();
    if (unsupported) throw new WaitgateConfigError('client', unsupported);
    this.#scripts = seam.scripts;
    this.prefix = parsed.prefix;
    seam.clocks.add(this.#clock);
    const g = parsed.groupCommit;
    const maxBatchSize = g === false ? 1 : g === true ? undefined : g.maxBatchSize;
    this.#enters = new GroupCommit((queue, batch) => this.#sendEnters(queue, batch), maxBatchSize ?? DEFAULT_MAX_ENTER_BATCH_SIZE);
    this.#positions = new GroupCommit((queue, batch) => this.#sendPositions(queue, batch), maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE);
    this.#claims = new GroupCommit((queue, batch) => this.#sendClaims(queue, batch), maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE);
    this.#headMoves = parsed.subscriber ? HeadMovesChannels.of(parsed.subscriber) : null;
  }

  // Not async: the batch's own promise, not another around it (nothing here throws).
  enter(queue: string, memberId: string, options: EnterOptions = {}): Promise<MemberSnapshot> {
    // The caller's deadline on Redis's clock (a lower bound); none until a reply told us its time.
    const notAfter = options.notAfter === undefined ? undefined : this.#clock.toRedisTime(queue, options.notAfter);
    return this.#enters.run(queue, enterArgs(memberId, notAfter, options));
  }

  async position(queue: string, memberId: string): Promise<MemberSnapshot> {
    return this.#positions.run(queue, memberId);
  }

  async #sendEnters(queue: string, batch: readonly EnterArgs[]): Promise<BatchReply<MemberSnapshot>> {
    const k = this.#keysOf(queue);
    const keys = [k.waiting, k.tokens, k.active, k.leases, k.meta, k.seen, k.entries, k.identities, k.lanes, k.codes];
    const reply = await this.#call<EnterBatchReply>(queue, 'enterIfAbsent', keys, encodeEnters(batch));
    return decodeEnterBatch(reply, (generation, now) => {
      this.#generations.learn(queue, generation);
      this.#clock.observe(queue, now, performance.now());
    });
  }

  async #sendPositions(queue: string, memberIds: readonly string[]): Promise<BatchReply<MemberSnapshot>> {
    const k = this.#keysOf(queue);
    const [shared, ...replies] = await this.#call<Reply[]>(queue, 'position', [k.waiting, k.tokens, k.meta, k.lanes], memberIds);
    return replies.map((compact) => settle(() => this.#position(queue, decodeCompactPosition(compact, shared!))));
  }

  async admit(queue: string, request: AdmitRequest): Promise<AdmitResult> {
    const k = this.#keysOf(queue);
    const reply = await this.#call<Reply>(
      queue,
      'popAndIssue',
      [k.waiting, k.tokens, k.active, k.leases, k.meta, k.admits, k.seen, k.entries, k.lanes],
      [
        request.ratePerSecond,
        request.burstFollowsRate ? -1 : request.burst,
        request.maxActive ?? -1,
        request.tokenTtlMs,
        request.windowMs,
        request.admitId,
        request.abandonAfterMs ?? -1,
        request.pickupTimeoutMs ?? -1,
        request.dropHorizonMs ?? -1,
        request.adaptive?.targetLatencyMs ?? -1,
        request.adaptive?.minRatePerSecond ?? 0,
        request.adaptive?.maxRatePerSecond ?? 0,
        request.holdSilentAfterMs ?? -1,
        ...request.tokens,
      ],
    );
    const { result, generation } = decodeAdmit(reply, request.tokens);
    this.#generations.learn(queue, generation);
    return result;
  }

  async claim(queue: string, request: ClaimRequest): Promise<ClaimResult> {
    return this.#claims.run(queue, request);
  }

  async #sendClaims(queue: string, batch: readonly ClaimRequest[]): Promise<BatchReply<ClaimResult>> {
    const k = this.#keysOf(queue);
    const args = batch.flatMap((r) => [r.memberId, r.token, r.claimId, r.leaseMs]);
    const replies = await this.#call<Reply[]>(queue, 'claimToken', [k.tokens, k.active, k.leases, k.meta], args);
    return replies.map((reply) => settle(() => decodeClaim(reply)));
  }

  async consume(queue: string, request: ConsumeRequest): Promise<boolean> {
    const k = this.#keysOf(queue);
    const args = [request.memberId, request.claimId, request.rememberMs, request.leaseMs ?? ''];
    return (await this.#call<number>(queue, 'consume', [k.tokens, k.active, k.leases, k.consumed, k.meta, k.log], args)) === 1;
  }

  async release(queue: string, request: ReleaseRequest): Promise<boolean> {
    const k = this.#keysOf(queue);
    const args = [request.memberId, request.claimId, request.leaseMs ?? '', request.failed === false ? '0' : '1'];
    return (await this.#call<number>(queue, 'release', [k.tokens, k.active, k.leases, k.meta], args)) === 1;
  }

  async leave(queue: string, memberId: string): Promise<boolean> {
    const k = this.#keysOf(queue);
    return (await this.#call<number>(queue, 'leave', [k.waiting, k.tokens, k.active, k.leases, k.meta, k.seen, k.lanes], [memberId])) === 1;
  }

  async revoke(queue: string, memberId: string, request: { retainMs: number }): Promise<boolean> {
    const k = this.#keysOf(queue);
    return (await this.#call<number>(queue, 'revoke', [k.tokens, k.active, k.leases, k.meta, k.revoked], [memberId, request.retainMs])) === 1;
  }

  async revokedAt(queue: string, memberId: string): Promise<number | null> {
    return decodeRevokedAt(await this.#call(queue, 'revokedAt', [this.#keysOf(queue).revoked, this.#keysOf(queue).meta], [memberId]));
  }

  async touch(queue: string, request: { seen: readonly string[]; pickedUp: readonly string[] }): Promise<number> {
    const k = this.#keysOf(queue);
    return this.#call<number>(
      queue,
      'touchMembers',
      [k.waiting, k.tokens, k.active, k.seen, k.meta, k.lanes],
      [request.seen.length, ...request.seen, ...request.pickedUp],
    );
  }

  async stats(queue: string): Promise<StatsSnapshot> {
    const k = this.#keysOf(queue);
    const { stats, generation } = decodeStats(await this.#call(queue, 'stats', [k.waiting, k.active, k.leases, k.meta, k.lanes], []));
    this.#generations.learn(queue, generation);
    this.#clock.observe(queue, stats.now, performance.now());
    return stats;
  }

  async inspect(queue: string, memberId: string): Promise<Omit<MemberInspection, 'memberId'>> {
    const k = this.#keysOf(queue);
    const { inspection, generation } = decodeInspect(await this.#call(queue, 'inspect', [k.waiting, k.tokens, k.seen, k.meta, k.lanes], [memberId]));
    this.#generations.learn(queue, generation);
    return inspection;
  }

  async queueSnapshot(queue: string): Promise<QueueSnapshot> {
    const k = this.#keysOf(queue);
    const { snapshot, generation } = decodeQueueSnapshot(await this.#call(queue, 'queueSnapshot', [k.waiting, k.meta], []));
    this.#generations.learn(queue, generation);
    return snapshot;
  }

  /**
   * With a `subscriber`: the pushes of `queue`'s admission steps, of the state
   * (generation) this instance knows; without one, never live (nothing is heard).
   */
  watchHeadMoves(queue: string, listener: HeadMovesListener, onError: (error: Error) => void): HeadMovesWatch {
    if (!this.#headMoves) return { live: () => false, stop: () => undefined };
    const channel = headMovesChannel(this.#keysOf(queue).meta);
    return this.#headMoves.watch(
      channel,
      forGeneration(() => this.#generations.expected(queue), listener),
      onError,
    );
  }

  async setControls(queue: string, request: ControlsRequest): Promise<{ version: number }> {
    const k = this.#keysOf(queue);
    const pairs = encodeControlsPatch(request.patch);
    const limits = request.limits ? encodeLimits(request.limits) : '-';
    const args = [request.seed, request.commitment, request.actor ?? '', JSON.stringify(request.patch), limits, ...pairs];
    return decodeSetControls(await this.#call<Reply>(queue, 'setControls', [k.waiting, k.meta, k.log], args));
  }

  async controlsLog(queue: string, limit: number): Promise<ControlsLogEntry[]> {
    return (await this.#call<string[]>(queue, 'controlsLog', [this.#keysOf(queue).log], [limit])).map(decodeLogEntry);
  }

  async controls(queue: string): Promise<StoredControls> {
    const k = this.#keysOf(queue);
    const { controls, generation } = decodeControls(await this.#call(queue, 'controls', [k.meta], []));
    this.#generations.learn(queue, generation);
    return controls;
  }

  async addCodes(queue: string, request: AddCodesRequest): Promise<number> {
    const args = [formatLanes(request.lanes), request.lane, request.uses, ...request.codes];
    return this.#call<number>(queue, 'addCodes', [this.#keysOf(queue).codes, this.#keysOf(queue).meta], args);
  }

  async cohort(queue: string, from: number, count: number): Promise<CohortPage> {
    return decodeCohortPage(await this.#call<Reply[]>(queue, 'cohort', [this.#keysOf(queue).meta], [String(from), String(count)]));
  }

  /**
   * Checks once that every Redis node evicts nothing (`maxmemory-policy noeviction`):
   * an evicted queue key loses members.
   */
  warnings(): Promise<StoreWarning[]> {
    // A failed check (Redis unreachable) is not remembered: the next queue call checks again.
    this.#warnings ??= this.#scripts
      .masters()
      .then(checkEvictionPolicy)
      .catch((error: unknown) => {
        this.#warnings = undefined;
        throw error;
      });
    return this.#warnings;
  }

  /**
   * After an operator has looked at why a queue's state vanished: accept what the
   * store holds now for `queue` (possibly nothing) on this instance.
   */
  async acceptCurrentState(queue: string): Promise<void> {
    this.#generations.forget(queue);
  }

  /** The keys of one queue; `queue` was validated by WaitingQueue. */
  #keysOf(queue: string): QueueKeys {
    let keys = this.#keys.get(queue);
    if (!keys) this.#keys.set(queue, (keys = queueKeys(this.prefix, queue)));
    return keys;
  }

  /**
   * Runs one script with the queue's known generation first in ARGV; `R` is its
   * reply shape, as its header documents. A STATE_LOST reply throws.
   */
  async #call<R = Reply>(queue: string, script: ScriptName, keys: string[], args: ReadonlyArray<string | number>): Promise<R> {
    const reply = await this.#scripts.run<R>(script, keys, [this.#generations.expected(queue), ...args]);
    if (isStateLost(reply)) throw new QueueStateLostError(queue);
    return reply;
  }

  /** A decoded position reply: learn the generation and Redis's clock from it (read now, so after the script ran). */
  #position(queue: string, { snapshot, generation }: ReturnType<typeof decodePosition>): MemberSnapshot {
    this.#generations.learn(queue, generation);
    this.#clock.observe(queue, snapshot.now, performance.now());
    return snapshot;
  }
}
