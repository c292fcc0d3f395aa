// The Store interface every store implements, and the raw snapshots and requests it
// exchanges with WaitingQueue. Exported for custom stores; users of WaitingQueue
// see only the results in types.ts.

import type { ControlsLogEntry, Lane, LaneStats, MemberInspection, PositionStatus, QueueTotals, WaitSlot } from '../types.js';

import type { ControlsRequest, ControlsView, StoredControls } from './controls-types.js';

export type { ControlsRequest, ControlsView, StoredControls };

/** Recent admissions, kept by the store as two fixed windows read as a sliding one. */
export interface AdmissionWindow {
  /** Start of the current window, epoch ms; null before the first admit. */
  start: number | null;
  /** Admissions in the current window. */
  current: number;
  /** Admissions in the window before it. */
  previous: number;
  /** When the current run of admissions began, epoch ms; null if none. */
  first: number | null;
  /**
   * When admissions were last recorded in this window, epoch ms; null if never.
   * The window is written only then, so `observedRate(window, last)` is the rate
   * the line moved at, as of its last move. Optional for custom stores.
   */
  last?: number | null;
  /**
   * The last time an admission step found the line able to move (it admitted
   * someone, or nobody was waiting), epoch ms; null if never. Since then the
   * line has been stalled (nothing admitted while members waited: `maxActive`
   * full, no admitter running). Optional for custom stores.
   */
  movedAt?: number | null;
  /**
   * The pace of the line per unit of the rate in force, measured over the recent steps
   * that left members waiting (members taken off the line per token offered, see
   * `nextPace` in src/rates.ts); null before any. Optional for custom stores.
   */
  pace?: number | null;
}

/** A member's raw state as a store reports it; `WaitingQueue` turns it into a {@link Position}. */
export interface MemberSnapshot {
  status: PositionStatus;
  rank: number | null;
  totalWaiting: number;
  entryToken: string | null;
  entryTokenExpiresAt: number | null;
  window: AdmissionWindow;
  /** The store's clock (Redis `TIME`), epoch ms. */
  now: number;
  /** WAITING only: the member's entry score (its place in the line's order). Optional for custom stores. */
  score?: number | null;
  /** The controls in force when the store answered. Optional for custom stores. */
  controls?: ControlsView;
  /** enter only: the member is new and the queue lets everyone through; send the call again with a token. */
  needsToken?: boolean;
  /** enter only: this call joined the member (or let it through, in passthrough). Optional for custom stores. */
  joined?: boolean;
  /**
   * The lanes the store keeps (SPEC §17), when it keeps any: then a WAITING member whose
   * `score` is in a lane's band (src/lanes.ts LANE_SPAN) waits in that lane, its rank
   * counting its own lane. Optional for custom stores.
   */
  lanes?: readonly Lane[];
}

/** The shape of the line: enough to estimate a waiting member's rank from its entry sequence. */
export interface QueueSnapshot {
  totalWaiting: number;
  /** Entry sequence of the first waiting member; null when nobody waits. */
  headSeq: number | null;
  /** Entry sequence of the last waiting member; null when nobody waits. */
  lastSeq: number | null;
  window: AdmissionWindow;
  now: number;
  /**
   * Optional: points of the line, read in the same atomic step as the rest: the
   * entry sequence `seq` of the member at 0-based `rank`, by increasing rank.
   * `RedisStore` and `MemoryStore` give ranks 0, then 64, 128, 256, … (powers of two
   * from 64) while below `totalWaiting − 1`, and `totalWaiting − 1`: 13 points at
   * 100,000 waiting, 16 at 1,000,000; around a pre-queue, the members on both sides
   * of its two score boundaries; inside a drawn pre-queue (random scores), up to 68
   * more, from rank 768 every max(16, ⌊r² / 50,000⌋) ranks below 50,000 (see
   * lua/queueSnapshot-2.lua), whatever the crowd. The position cache interpolates a member's
   * rank between the two probes around its sequence, so members who left only blur
   * the estimate inside that one segment. Without probes (a custom store), or if
   * they are not strictly increasing in both rank and sequence, it interpolates
   * between `headSeq` and `lastSeq` alone.
   */
  probes?: ReadonlyArray<{ rank: number; seq: number }>;
  /** The controls in force when the snapshot was taken. Optional for custom stores. */
  controls?: ControlsView;
  /**
   * Optional: the members admission steps took off the line (admitted or dropped as
   * abandoned) since the queue's state began, read in the same atomic step. With
   * {@link Store.watchHeadMoves} it tells a position cache by how much every rank
   * has fallen since this snapshot.
   */
  headMoves?: number;
}

/** Hears a queue's {@link QueueSnapshot.headMoves} after an admission step. */
export type HeadMovesListener = (headMoves: number) => void;

/** A running {@link Store.watchHeadMoves}. */
export interface HeadMovesWatch {
  /**
   * Whether every push is being heard: subscribed, and connected since. While it is
   * false a push may be missed, so a listener must not rely on the count it heard last.
   */
  live(): boolean;
  /** Stops calling the listener. */
  stop(): void;
}

/** Arguments of one admission step. */
export interface AdmitRequest {
  ratePerSecond: number;
  burst: number;
  /**
   * `admitBurst` was never set: unless the controls set a burst, the burst in force is
   * one second of the rate in force (pinned, adaptive or `ratePerSecond`), not `burst`.
   */
  burstFollowsRate?: boolean;
  /** null: no cap. */
  maxActive: number | null;
  tokenTtlMs: number;
  windowMs: number;
  /** Unique per call: a re-sent call with the same id admits nothing. */
  admitId: string;
  /** Fresh tokens; member i popped gets tokens[i]. At most this many are admitted. */
  tokens: readonly string[];
  /**
   * A member popped whose last sign of life (see {@link Store.touch}) is older than
   * this, or who has none, is dropped instead of admitted, at no admission cost.
   * null or absent: nobody is dropped.
   */
  abandonAfterMs?: number | null;
  /**
   * With `abandonAfterMs`: a waiting member met at the head whose last sign of life is
   * older than this (but not older than `abandonAfterMs`) is held: neither admitted nor
   * dropped, it keeps its place and the step goes on to the next members, at no
   * admission cost; once it calls again it is the first admitted. A step holds at most
   * 256 members (beyond them a silent member is admitted, as without holding). null,
   * absent or negative: nobody is held.
   */
  holdSilentAfterMs?: number | null;
  /** A token nobody reads within this of its admission is dropped. null or absent: none. */
  pickupTimeoutMs?: number | null;
  /**
   * Drops of abandoned members may carry the line across the presence head (computed
   * by the store from the rate and burst in force, see `presenceHead` in src/rates.ts)
   * no faster than once per this many ms, over every instance (a shared bucket of one
   * second's worth): drops must not move the line faster than a live member far back
   * can be seen. null or absent: no limit.
   */
  dropHorizonMs?: number | null;
  /**
   * Adaptive admission: unless the controls pin a rate, the store sets the rate in
   * force from the orders settled lately (their latency from claim to consume or
   * release, and the share that failed), at most once a second, within [min, max]:
   * the law of src/admission-control.ts. Absent or null: `ratePerSecond` (fixed).
   */
  adaptive?: { targetLatencyMs: number; minRatePerSecond: number; maxRatePerSecond: number } | null;
}

export interface AdmitResult {
  /**
   * In FIFO order. `waitedMs`: from the member's entry (or the scheduled opening, for a
   * pre-queue place) to now; null or absent when the store cannot tell.
   */
  admitted: { memberId: string; entryToken: string; waitedMs?: number | null }[];
  expiresAt: number;
  /** Members holding a live token after this step. */
  active: number;
  /**
   * How many this step could have admitted with enough fresh tokens: the least of
   * the bucket, the burst, `maxActive` room and the members waiting, before this
   * step. When it exceeds the tokens sent, the caller may send another step with
   * the difference. Optional for custom stores (then no second step is sent).
   */
  admittable?: number;
  /** Members dropped as abandoned by this step, in line order. */
  abandoned?: string[];
  /** How many members this step held at the head ({@link AdmitRequest.holdSilentAfterMs}). Optional for custom stores. */
  held?: number;
}

export interface ClaimRequest {
  memberId: string;
  token: string;
  claimId: string;
  leaseMs: number;
}

export type ClaimResult =
  | { status: 'CLAIMED'; expiresAt: number }
  | { status: 'INVALID' }
  /** `leaseExpiresAt`: when the other request's lease ends, epoch ms (optional for custom stores). */
  | { status: 'IN_USE'; leaseExpiresAt?: number; now?: number };

export interface SettleRequest {
  memberId: string;
  claimId: string;
  /** The claim's lease (ms), so the store can measure the order's latency from the claim. Optional. */
  leaseMs?: number;
}

export interface ReleaseRequest extends SettleRequest {
  /**
   * Whether the order path failed (a thrown handler, a 5xx, a dropped connection), so the
   * release counts as a failed order for adaptive admission, at most once per token per
   * order window (2 s). false (a 4xx answer: validation, out of stock, payment declined):
   * the release is not counted at all. Absent: true.
   */
  failed?: boolean;
}

export interface ConsumeRequest extends SettleRequest {
  /** How long a consumed claim id is remembered, so a repeated consume still answers true. */
  rememberMs: number;
}

export interface StatsSnapshot {
  waiting: number;
  active: number;
  claimed: number;
  /** Members dropped as abandoned since the queue began. Optional for custom stores. */
  abandoned?: number;
  window: AdmissionWindow;
  now: number;
  /** Totals since the queue began. Optional for custom stores. */
  totals?: QueueTotals;
  /** The wait histograms of the last minutes (src/queue-figures.ts), any order. Optional for custom stores. */
  waitSlots?: ReadonlyArray<WaitSlot | undefined>;
  /** The rate the controls pin, or null. Optional for custom stores. */
  pinnedRate?: number | null;
  /** The rate adaptive admission set last, or null. Optional for custom stores. */
  adaptiveRate?: number | null;
  /** The lanes, the default one first, when the store keeps any (SPEC §17). Optional for custom stores. */
  lanes?: LaneStats[];
}

/** Something about the store's setup that can lose members, reported once through the `warning` event. */
export interface StoreWarning {
  code: string;
  message: string;
}

/**
 * What a store does, one method per atomic operation. `RedisStore` runs each as
 * one Lua script; `MemoryStore` as one synchronous step. Member ids arrive
 * validated and canonical. A store never reads the app clock for state: it uses
 * its own (Redis `TIME`, or the injected `now`).
 */
export interface Store {
  /**
   * `options.notAfter` (a `performance.now()` instant): the caller stops waiting then, and
   * reports the outcome as unknown. A store whose commands can still arrive later
   * (RedisStore: ioredis re-sends, Cluster failover retries) must not let such a late
   * enter write: the member may have been admitted and consumed meanwhile through a
   * retry, and a late enter would queue them again for a second admission.
   */
  enter(queue: string, memberId: string, options?: EnterOptions): Promise<MemberSnapshot>;
  position(queue: string, memberId: string): Promise<MemberSnapshot>;
  admit(queue: string, request: AdmitRequest): Promise<AdmitResult>;
  claim(queue: string, request: ClaimRequest): Promise<ClaimResult>;
  consume(queue: string, request: ConsumeRequest): Promise<boolean>;
  release(queue: string, request: ReleaseRequest): Promise<boolean>;
  leave(queue: string, memberId: string): Promise<boolean>;
  stats(queue: string): Promise<StatsSnapshot>;
  /** Optional: after the queue's state was lost (QueueStateLostError), accept what the store holds now. */
  acceptCurrentState?(queue: string): Promise<void>;
  /** Optional: the shape of the line, for the `positionCache` option of WaitingQueue. */
  queueSnapshot?(queue: string): Promise<QueueSnapshot>;
  /** Optional set-up checks (e.g. Redis eviction policy), run once per queue on first use. */
  warnings?(): Promise<StoreWarning[]>;
  /**
   * Optional: applies a validated controls patch in one atomic step. Refuses what needs
   * the store's state or clock to judge (a draw with an opening in the past, changing
   * `shuffle` once the pre-queue has members) with `WaitgateConfigError`, writing nothing.
   */
  setControls?(queue: string, request: ControlsRequest): Promise<{ version: number }>;
  /** Optional: the controls as stored. */
  controls?(queue: string): Promise<StoredControls>;
  /** Optional: the last `limit` changes of the controls, newest first (the audit trail, capped at CONTROLS_LOG_CAP). */
  controlsLog?(queue: string, limit: number): Promise<ControlsLogEntry[]>;
  /** A page of the shuffled pre-queue's cohort: entries `from` (1-based) onward, at most `count` (1..1000). Optional for custom stores. */
  cohort?(queue: string, from: number, count: number): Promise<CohortPage>;
  /**
   * Optional: what an instance answered lately (at most 1,000 ids a call): `seen`,
   * waiting members near the head (their last-seen time is set, if they still wait);
   * `pickedUp`, members answered READY (a token nobody had read is picked up). Resolves
   * with how many were recorded.
   */
  touch?(queue: string, request: { seen: readonly string[]; pickedUp: readonly string[] }): Promise<number>;
  /**
   * Optional: calls `listener` after each admission step that took members off the
   * line of `queue` (on any instance), with the queue's new {@link QueueSnapshot.headMoves},
   * of the state (generation) the store knows. Pushes may arrive late, twice or out of
   * order, never ahead of the step; a listener keeps the largest count. A failure to
   * listen goes to `onError`, and the watch is then never live. Without it (or while
   * the watch is not live) position caches estimate how far the head moved since
   * their snapshot from its pace.
   */
  watchHeadMoves?(queue: string, listener: HeadMovesListener, onError: (error: Error) => void): HeadMovesWatch;
  /** Optional: one member's state for an operator, without its token; reads only (not a sign of life, no pick-up). */
  inspect?(queue: string, memberId: string): Promise<Omit<MemberInspection, 'memberId'>>;
  /**
   * Optional: ends a member's signed pass (WaitingQueue.revoke): drops its token and records
   * the moment (store time), kept `retainMs`. Resolves true if it held a live token. Safe to repeat.
   */
  revoke?(queue: string, memberId: string, request: { retainMs: number }): Promise<boolean>;
  /** Optional: when the member was last revoked (epoch ms, store time), or null. Reads only. */
  revokedAt?(queue: string, memberId: string): Promise<number | null>;
  /**
   * Optional: stores invite codes of one lane (at most 1,000 a call), and the caller's lanes
   * (a stored lane keeps its index, a new one is appended). A code already stored is left
   * as it is. Resolves with how many codes were added.
   */
  addCodes?(queue: string, request: AddCodesRequest): Promise<number>;
}

/** {@link Store.addCodes}. */
export interface AddCodesRequest {
  /** The queue's lanes, as declared in its options. */
  lanes: readonly Lane[];
  lane: string;
  codes: readonly string[];
  uses: number;
}

/** Options of {@link Store.enter}. */
export interface EnterOptions {
  notAfter?: number;
  /** A fresh token, for a new member of a queue in passthrough mode (issued at once). */
  token?: string;
  /** That token's TTL, ms. */
  tokenTtlMs?: number;
  /**
   * The caller's safety net (sent with `token`): its option and the rate, burst and cap it
   * admits with where the controls set none. The store lets a new member in at once with
   * `token` while nobody waits and these allow; the control `safetyNet` overrides `option`.
   */
  safetyNet?: SafetyNetRequest;
  /** A waiting member whose rank is below this has its enter recorded as a sign of life (abandonAfterSeconds). */
  presenceHead?: number;
  /**
   * One place per identity (SPEC §17): a new member whose identity's other members hold
   * `maxPlaces` places is refused with `IdentityLimitError`, nothing written.
   */
  identity?: IdentityRequest;
  /**
   * An invite code (src/lanes.ts CODE): a new member joins the code's lane and spends one
   * use in the same atomic step; an unknown or spent code throws CodeInvalidError and
   * writes nothing. A member already waiting or holding a token keeps its place: the code
   * is neither checked nor spent.
   */
  code?: string;
}

/** {@link EnterOptions.identity}: the identity as the store keeps it and its limit of places. */
export interface IdentityRequest {
  /** The identity's SHA-256, base64url (src/identity.ts): the app's identity string never reaches the store. */
  key: string;
  /** 1 to 100. */
  maxPlaces: number;
}

/** {@link EnterOptions.safetyNet}: what the store needs to judge an instant entry. */
export interface SafetyNetRequest {
  /** The caller's `safetyNet` option, in force while the controls set none. */
  option: boolean;
  ratePerSecond: number;
  /** null: the burst follows the rate in force. */
  burst: number | null;
  /** null: no cap. */
  maxActive: number | null;
}

/** A page of a shuffled pre-queue's cohort (SPEC §17): the chain's head and length, and salted hashes in entry order. */
export interface CohortPage {
  /** The chain head, 40 hex digits; null for an empty chain. */
  head: string | null;
  length: number;
  hashes: string[];
}
