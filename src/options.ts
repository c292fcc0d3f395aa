// WaitingQueue options: one strict zod schema, defaults, and the resolved config the queue runs on.

import { z } from 'zod';
import { WaitgateConfigError } from './errors.js';
import type { AdmissionOptions, ControlLimits, PollingTier } from './types.js';
import { MAX_BURST, defaultBurst } from './rates.js';
import type { PositionCacheOptions } from './position-cache.js';
import type { Store } from './store/store.js';
import { PassSigner } from './signing/pass-signer.js';
import { loadSigningKeys, signingSchema, type SigningOptions } from './signing/keys.js';
import { MAX_PLACES_PER_IDENTITY } from './identity.js';
import { lanesSchema, type Lane } from './lanes.js';

export type { PollingTier } from './types.js';

/** Options of {@link WaitingQueue}. Only `store` is required. */
export interface WaitingQueueOptions {
  /** A `RedisStore`, a `MemoryStore`, or any object implementing {@link Store}. */
  store: Store;
  /** Queue name, 1–64 of `[A-Za-z0-9._-]`. Several queues can share one store. Default `'default'`. */
  name?: string;
  /** Global admission rate, shared by every instance on the same store and name. Default 50. */
  admitRatePerSecond?: number;
  /** Bucket capacity: the most one `admit()` can admit (1–10,000). Default: the rate, rounded down, at least 1. */
  admitBurst?: number;
  /** The most members holding a token (READY or CLAIMED) at once. Default null (no cap). */
  maxActive?: number | null;
  /** How long an issued token stays valid if unused, in seconds. Default 300. */
  entryTokenTtlSeconds?: number;
  /** Lease of a claim in seconds; a claimed token never expires before its lease ends. Default 30. */
  claimTtlSeconds?: number;
  /** Polling tiers by rank. Default `[{ belowRank: 100, seconds: 1 }, { belowRank: 1000, seconds: 3 }, { seconds: 5 }]`. */
  pollingIntervals?: readonly PollingTier[];
  /** Every store call settles within this many milliseconds or fails with `StoreUnavailableError`. Default 1000. */
  operationTimeoutMs?: number;
  /**
   * Polling at scale: `position()` estimates a waiting member's rank from its cached
   * entry sequence and a snapshot of the line refreshed every `refreshMs`, so a
   * poll costs the store nothing until the member nears the head. Members estimated
   * below `exactBelowRank` (default: the largest `belowRank` of the polling tiers,
   * or more if that many can be admitted between two refreshes) are looked up
   * exactly, so near the head the rank and the status (READY as soon as admitted, by
   * any instance) are exact; further back, ranks are exact while nobody leaves the
   * line, otherwise estimated (interpolated between rank probes of the snapshot),
   * and up to `refreshMs` old. Default false (every poll is one exact store call).
   */
  positionCache?: boolean | PositionCacheOptions;
  /**
   * A waiting member who made no `enter` or `position` call (on any instance) for
   * this many seconds when its turn comes is dropped instead of admitted: it costs
   * no admission, an `abandoned` event reports it, and it reads `NOT_ENTERED` after.
   * At least twice the slowest polling interval plus 2 s. Default 300; null: never.
   */
  abandonAfterSeconds?: number | null;
  /**
   * Hold at the head (needs `abandonAfterSeconds`, and must be below it): at its turn, a
   * waiting member silent (no `enter` or `position` call, on any instance) for more than
   * this many seconds, but not yet `abandonAfterSeconds`, is neither admitted nor
   * dropped: it keeps its place at the head and the admission step goes on to the next
   * live members, at no admission cost. Its next call makes it the first admitted; at
   * `abandonAfterSeconds` of silence it is dropped as usual. Near the head members poll
   * fast, so a short silence there already means "probably gone": this keeps most
   * admissions from going to members who just left. At least the slowest polling
   * interval a member can be told before reaching the head (at the admission rate),
   * +20% jitter, +1 s presence flush, +0.5 s. Default null (nobody is held).
   */
  holdSilentAfterSeconds?: number | null;
  /**
   * An admitted member whose token nobody reads (a `position`, `enter` or `token`
   * call answering READY, or a claim) within this many seconds of its admission
   * loses it, and its `maxActive` place goes to the next member. Default null (none).
   */
  pickupTimeoutSeconds?: number | null;
  /**
   * How the admission rate is set. `{ mode: 'fixed' }` (default): `admitRatePerSecond`
   * (or the rate set through the controls). `{ mode: 'adaptive', targetLatencyMs,
   * minRatePerSecond, maxRatePerSecond }`: the rate follows the order path, as the
   * store measures it from claim to consume or release; see the README, "Admission
   * that follows the order database".
   */
  admission?: AdmissionOptions;
  /**
   * Signed entry passes (SPEC §15): READY tokens become compact JWS (ES256 or EdDSA) that
   * `waitgate/pass` verifies anywhere without the store; the store still claims and consumes
   * each by its `jti`, once. The first key signs, every key listed verifies. Default: none
   * (tokens are opaque random strings).
   */
  signing?: SigningOptions;
  /** Guardrails: `setControls` refuses a rate, burst or cap beyond them (WaitgateConfigError, nothing written). Default none. */
  limits?: ControlLimits;
  /** The safety net (SPEC §18): while nobody waits and the rate, `maxActive` and stock allow, `enter` admits at once (READY in
   * the same call); a line forms only when arrivals exceed them. `setControls({ safetyNet })` overrides it everywhere. Default false. */
  safetyNet?: boolean;
  /** One place per identity (SPEC §17): the places members of one identity (`enter(id, { identity })`) may hold at once, 1–100. Default 1. */
  maxPlacesPerIdentity?: number;
  /** Lanes for invite codes (SPEC §17), each with its share of every admission step (the shares add up to at most 1). Default none. */
  lanes?: readonly Lane[];
}

export type { AdmissionOptions, ControlLimits } from './types.js';

/** The options after defaults, in the units the queue works in. */
export interface QueueConfig {
  store: Store;
  name: string;
  admitRatePerSecond: number;
  /** The burst set, or one second of `admitRatePerSecond` when it was never set. */
  admitBurst: number;
  /** `admitBurst` was never set: the burst in force follows the rate in force (pinned, adaptive or configured). */
  burstFollowsRate: boolean;
  maxActive: number | null;
  entryTokenTtlMs: number;
  claimTtlMs: number;
  pollingIntervals: readonly PollingTier[];
  operationTimeoutMs: number;
  /** null when off. */
  positionCache: Required<PositionCacheOptions> | null;
  /** null: never. */
  abandonAfterMs: number | null;
  /** null: nobody is held. */
  holdSilentAfterMs: number | null;
  /** null: none. */
  pickupTimeoutMs: number | null;
  admission: AdmissionOptions;
  /** null: tokens are opaque. */
  signer: PassSigner | null;
  limits: Readonly<ControlLimits>;
  safetyNet: boolean;
  maxPlacesPerIdentity: number;
  lanes: readonly Lane[];
}

export const DEFAULT_POLLING_INTERVALS: readonly PollingTier[] = Object.freeze([
  { belowRank: 100, seconds: 1 },
  { belowRank: 1000, seconds: 3 },
  { seconds: 5 },
]);

export const QUEUE_NAME = /^[A-Za-z0-9._-]{1,64}$/;
export { MAX_BURST } from './rates.js';
const DAY_SECONDS = 86_400;

const STORE_METHODS = ['enter', 'position', 'admit', 'claim', 'consume', 'release', 'leave', 'stats'] as const;

function isStore(value: unknown): value is Store {
  return typeof value === 'object' && value !== null && STORE_METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

const seconds = (max: number) => z.number().finite().min(0.001).max(max);

const tierSchema = z.strictObject({
  belowRank: z.number().int().min(1).optional(),
  seconds: seconds(3600),
});

const pollingSchema = z
  .array(tierSchema)
  .min(1)
  .superRefine((tiers, ctx) => {
    tiers.forEach((tier, i) => {
      const last = i === tiers.length - 1;
      if (last && tier.belowRank !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'belowRank'], message: 'the last tier must have no belowRank (it covers every rank)' });
      }
      if (!last && tier.belowRank === undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'belowRank'], message: 'every tier but the last needs a belowRank' });
      }
      const previous = tiers[i - 1]?.belowRank;
      if (previous !== undefined && tier.belowRank !== undefined && tier.belowRank <= previous) {
        ctx.addIssue({ code: 'custom', path: [i, 'belowRank'], message: 'belowRank must increase from tier to tier' });
      }
    });
  });

const optionsSchema = z
  .strictObject({
    store: z.custom<Store>(isStore, 'must be a RedisStore, a MemoryStore or an object implementing Store'),
    name: z.string().regex(QUEUE_NAME, 'must be 1-64 characters of A-Z a-z 0-9 . _ -').default('default'),
    admitRatePerSecond: z.number().finite().gt(0).max(1_000_000).default(50),
    admitBurst: z.number().int().min(1).max(MAX_BURST).optional(),
    maxActive: z.number().int().min(1).nullable().default(null),
    entryTokenTtlSeconds: seconds(7 * DAY_SECONDS).default(300),
    claimTtlSeconds: seconds(DAY_SECONDS).default(30),
    pollingIntervals: pollingSchema.default(() => [...DEFAULT_POLLING_INTERVALS]),
    operationTimeoutMs: z.number().int().min(1).max(600_000).default(1000),
    positionCache: z
      .union([
        z.boolean(),
        z.strictObject({
          refreshMs: z.number().int().min(10).max(60_000).optional(),
          maxMembers: z.number().int().min(1).max(100_000_000).optional(),
          exactBelowRank: z.number().int().min(0).max(100_000_000).optional(),
        }),
      ])
      .default(false),
    abandonAfterSeconds: seconds(7 * DAY_SECONDS)
      .nullable()
      .default(300),
    holdSilentAfterSeconds: seconds(7 * DAY_SECONDS)
      .nullable()
      .default(null),
    pickupTimeoutSeconds: seconds(DAY_SECONDS).nullable().default(null),
    admission: z
      .discriminatedUnion(
        'mode',
        [
          z.strictObject({ mode: z.literal('fixed') }),
          z.strictObject({
            mode: z.literal('adaptive'),
            targetLatencyMs: z.number().int().min(1).max(600_000),
            minRatePerSecond: z.number().finite().gt(0).max(1_000_000),
            maxRatePerSecond: z.number().finite().gt(0).max(1_000_000),
          }),
        ],
        { error: "must have mode 'fixed' or 'adaptive'" },
      )
      .default({ mode: 'fixed' }),
    signing: signingSchema.optional(),
    limits: z
      .strictObject({
        maxRatePerSecond: z.number().finite().gt(0).max(1_000_000).optional(),
        maxBurst: z.number().int().min(1).max(MAX_BURST).optional(),
        maxActive: z.number().int().min(1).optional(),
      })
      .default({}),
    safetyNet: z.boolean().default(false),
    maxPlacesPerIdentity: z.number().int().min(1).max(MAX_PLACES_PER_IDENTITY).default(1),
    lanes: lanesSchema.default([]),
  })
  .superRefine((options, ctx) => {
    // A member polling at its interval must never look silent: the slowest interval
    // (with the client's +20% jitter), twice, plus the presence flush.
    const slowest = Math.max(...options.pollingIntervals.map((tier) => tier.seconds));
    const least = 2 * slowest * 1.2 + 2;
    // A token's pick-up is seen through the same polls.
    const admission = options.admission;
    if (admission.mode === 'adaptive' && admission.minRatePerSecond > admission.maxRatePerSecond) {
      ctx.addIssue({ code: 'custom', path: ['admission', 'minRatePerSecond'], message: 'must not be above admission.maxRatePerSecond' });
    }
    for (const option of ['abandonAfterSeconds', 'pickupTimeoutSeconds'] as const) {
      const value = options[option];
      if (value !== null && value < least) {
        ctx.addIssue({
          code: 'custom',
          path: [option],
          message: `must be at least ${least} s with these polling intervals (twice the slowest, +20% jitter, +2 s), or null`,
        });
      }
    }
    const hold = options.holdSilentAfterSeconds;
    if (hold !== null) {
      const abandonAfter = options.abandonAfterSeconds;
      const rate = admission.mode === 'adaptive' ? Math.max(options.admitRatePerSecond, admission.maxRatePerSecond) : options.admitRatePerSecond;
      const burst = options.admitBurst ?? defaultBurst(rate);
      const headSeconds = headPollingSeconds(options.pollingIntervals, rate, burst);
      const leastHold = Number((headSeconds * 1.2 + 1.5).toPrecision(12));
      if (abandonAfter === null) {
        ctx.addIssue({
          code: 'custom',
          path: ['holdSilentAfterSeconds'],
          message: 'needs abandonAfterSeconds (it holds members abandonment has not dropped yet), or null',
        });
      } else if (hold >= abandonAfter) {
        ctx.addIssue({ code: 'custom', path: ['holdSilentAfterSeconds'], message: `must be below abandonAfterSeconds (${abandonAfter} s), or null` });
      } else if (hold < leastHold) {
        ctx.addIssue({
          code: 'custom',
          path: ['holdSilentAfterSeconds'],
          message: `must be at least ${leastHold} s with these polling intervals and rate (the slowest interval a member can be told before its turn, ${headSeconds} s, +20% jitter, +1 s presence flush, +0.5 s), or null`,
        });
      }
    }
  });

/**
 * The slowest polling interval a member can have been told at its last poll when its
 * turn comes: the interval of every tier whose first rank the line can move through
 * (a full bucket plus `rate` over one interval of that tier, +20% jitter) before the
 * member polls again. Rank 0's tier always counts. Drops of abandoned members move the
 * line faster; a live member held for that reason is admitted after its next poll.
 */
function headPollingSeconds(tiers: readonly PollingTier[], rate: number, burst: number): number {
  let seconds = tiers[0]!.seconds;
  tiers.forEach((tier, i) => {
    const firstRank = i === 0 ? 0 : (tiers[i - 1]!.belowRank ?? 0);
    if (firstRank <= burst + rate * tier.seconds * 1.2) seconds = Math.max(seconds, tier.seconds);
  });
  return seconds;
}

/**
 * Validates options against one strict schema and resolves the defaults.
 * @throws {@link WaitgateConfigError} naming the first unknown or bad option.
 */
export function parseQueueOptions(options: unknown): QueueConfig {
  const parsed = parseStrict(optionsSchema, options ?? {});
  const admitBurst = parsed.admitBurst ?? defaultBurst(parsed.admitRatePerSecond);
  return {
    store: parsed.store,
    name: parsed.name,
    admitRatePerSecond: parsed.admitRatePerSecond,
    admitBurst,
    burstFollowsRate: parsed.admitBurst === undefined,
    maxActive: parsed.maxActive,
    entryTokenTtlMs: Math.round(parsed.entryTokenTtlSeconds * 1000),
    claimTtlMs: Math.round(parsed.claimTtlSeconds * 1000),
    pollingIntervals: Object.freeze(parsed.pollingIntervals.map((tier) => Object.freeze({ ...tier }))),
    operationTimeoutMs: parsed.operationTimeoutMs,
    positionCache: resolvePositionCache(parsed.positionCache, parsed.store, {
      admitRatePerSecond: parsed.admitRatePerSecond,
      admitBurst,
      largestBelowRank: Math.max(0, ...parsed.pollingIntervals.map((tier) => tier.belowRank ?? 0)),
      heldAtHead: parsed.holdSilentAfterSeconds === null ? 0 : MAX_HELD_AT_HEAD,
    }),
    abandonAfterMs: parsed.abandonAfterSeconds === null ? null : Math.round(parsed.abandonAfterSeconds * 1000),
    holdSilentAfterMs: parsed.holdSilentAfterSeconds === null ? null : Math.round(parsed.holdSilentAfterSeconds * 1000),
    pickupTimeoutMs: parsed.pickupTimeoutSeconds === null ? null : Math.round(parsed.pickupTimeoutSeconds * 1000),
    admission: Object.freeze({ ...parsed.admission }),
    signer: parsed.signing ? new PassSigner(loadSigningKeys(parsed.signing), parsed.name, Math.round(parsed.entryTokenTtlSeconds * 1000)) : null,
    limits: Object.freeze({ ...parsed.limits }),
    safetyNet: parsed.safetyNet,
    maxPlacesPerIdentity: parsed.maxPlacesPerIdentity,
    lanes: Object.freeze(parsed.lanes.map((lane) => Object.freeze({ ...lane }))),
  };
}

function resolvePositionCache(
  option: boolean | PositionCacheOptions,
  store: Store,
  queue: { admitRatePerSecond: number; admitBurst: number; largestBelowRank: number; heldAtHead: number },
): Required<PositionCacheOptions> | null {
  if (option === false) return null;
  if (typeof store.queueSnapshot !== 'function') {
    throw new WaitgateConfigError('positionCache', 'needs a store with queueSnapshot() (RedisStore and MemoryStore have it)');
  }
  const options = option === true ? {} : option;
  const refreshMs = options.refreshMs ?? 250;
  return {
    refreshMs,
    maxMembers: options.maxMembers ?? 100_000,
    exactBelowRank: options.exactBelowRank ?? defaultExactBelowRank(queue, refreshMs),
  };
}

/**
 * The largest `belowRank` of the polling tiers (0 with a single tier), or, if
 * larger, the most members that can be admitted between two snapshot refreshes (a
 * full bucket plus the refill over `refreshMs`) with a 25% margin for the
 * estimate's error: a member who may have been admitted since the snapshot was
 * taken is always looked up exactly. The first term makes every member of the
 * faster polling tiers exact; their number, and so the exact lookups per second,
 * is bounded by the tiers, not by the crowd (with the default tiers: at most 100
 * polls/s at 1 s plus 900 at 3 s, 400 lookups/s per queue). With
 * `holdSilentAfterSeconds`, plus the most members an admission step holds at the head
 * (256): admitted members behind them are not passed by the head's sequence, so
 * they must still be within the exact range.
 */
function defaultExactBelowRank(
  queue: { admitRatePerSecond: number; admitBurst: number; largestBelowRank: number; heldAtHead: number },
  refreshMs: number,
): number {
  const admittableBetweenRefreshes = queue.admitBurst + (queue.admitRatePerSecond * refreshMs) / 1000;
  // Rounded to 12 significant digits first, so that float noise (1.25 × (3 + 1.1 × 6000 / 1000) is 12.000000000000002) does not round up.
  return Math.max(queue.largestBelowRank, Math.ceil(Number((1.25 * admittableBetweenRefreshes).toPrecision(12)))) + queue.heldAtHead;
}

/** The most members one admission step holds at the head (MAX_HELD in lua/popAndIssue-9.lua). */
const MAX_HELD_AT_HEAD = 256;

/**
 * Parses with a zod schema, turning the first issue into a {@link WaitgateConfigError}
 * that names the option. Shared by every options object of the package.
 */
export function parseStrict<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new WaitgateConfigError('options', 'must be an object');
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = innermost(result.error.issues[0]!);
  if (issue.code === 'unrecognized_keys') {
    throw new WaitgateConfigError(issue.keys.join(', '), 'unknown option (check the spelling)');
  }
  throw new WaitgateConfigError(issue.path.map(String).join('.') || 'options', issue.message);
}

/**
 * A union (e.g. `positionCache: boolean | {...}`) reports one issue for the whole
 * value; when the value has the shape of exactly one branch (the branch failed on
 * a field inside it), that branch's issue names the option better (`positionCache.refreshMs`).
 */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const inside = issue.errors.filter((branch) => branch[0] !== undefined && branch[0].path.length > 0);
  if (inside.length !== 1) return issue;
  const first = inside[0]![0]!;
  return innermost({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue);
}
