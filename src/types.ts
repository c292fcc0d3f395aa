// Public result types, and the Store interface every store implements.

/** Where a member stands. CLAIMED tokens still read as READY. */
export type PositionStatus = 'WAITING' | 'READY' | 'NOT_ENTERED';

/** What `enter` and `position` return. Plain JSON: safe to send to the browser as is. */
export interface Position {
  status: PositionStatus;
  /** 0-based place in the line (0 = next to be admitted); null unless WAITING. */
  rank: number | null;
  /** Members waiting in this queue now. */
  currentTotalWaitingCount: number;
  /** WAITING: rank ÷ the effective admission rate, whole seconds rounded up; null otherwise. */
  estimatedWaitSeconds: number | null;
  /** How long the client should wait before polling again, in seconds. */
  pollingIntervalSeconds: number;
  /** READY only: the token to present on the order request. */
  entryToken: string | null;
  /** READY only: when the unused token expires, epoch milliseconds. */
  entryTokenExpiresAt: number | null;
}

/** A member admitted by `admit()`. */
export interface Admission {
  /** The member id, in its canonical string form. */
  memberId: string;
  entryToken: string;
  /** When the unused token expires, epoch milliseconds. */
  expiresAt: number;
}

/** Payload item of the `admitted` event: an admission without its token. */
export interface AdmittedMember {
  memberId: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** A token claimed for one request: pass it to `consume` after commit or `release` after rollback. */
export interface Claim {
  memberId: string;
  /** Random id of this claim; fences a late consume after the lease lapsed and another claim took over. */
  claimId: string;
  /** Stable, non-secret id of the token (not the token): store it under a UNIQUE constraint in the order row. */
  tokenId: string;
  /** When the lease ends unless consumed or released, epoch milliseconds. */
  expiresAt: number;
}

/** Counters of one queue. */
export interface QueueStats {
  /** Members waiting. */
  waiting: number;
  /** Members holding a live token (READY or CLAIMED). */
  active: number;
  /** Of those, tokens claimed by an in-flight request. */
  claimed: number;
  /** Admissions per second observed over the last few seconds (0 when none). */
  admittedPerSecond: number;
}

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
  /** WAITING only: the member's entry sequence (its place in FIFO order). Optional for custom stores. */
  seq?: number | null;
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
   * 100,000 waiting, 16 at 1,000,000. The position cache interpolates a member's
   * rank between the two probes around its sequence, so members who left only blur
   * the estimate inside that one segment. Without probes (a custom store), or if
   * they are not strictly increasing in both rank and sequence, it interpolates
   * between `headSeq` and `lastSeq` alone.
   */
  probes?: ReadonlyArray<{ rank: number; seq: number }>;
}

/** Arguments of one admission step. */
export interface AdmitRequest {
  ratePerSecond: number;
  burst: number;
  /** null: no cap. */
  maxActive: number | null;
  tokenTtlMs: number;
  windowMs: number;
  /** Unique per call: a re-sent call with the same id admits nothing. */
  admitId: string;
  /** Fresh tokens; member i popped gets tokens[i]. At most this many are admitted. */
  tokens: readonly string[];
}

export interface AdmitResult {
  /** In FIFO order. */
  admitted: { memberId: string; entryToken: string }[];
  expiresAt: number;
  /** Members holding a live token after this step. */
  active: number;
}

export interface ClaimRequest {
  memberId: string;
  token: string;
  claimId: string;
  leaseMs: number;
}

export type ClaimResult = { status: 'CLAIMED'; expiresAt: number } | { status: 'INVALID' } | { status: 'IN_USE' };

export interface SettleRequest {
  memberId: string;
  claimId: string;
}

export interface ConsumeRequest extends SettleRequest {
  /** How long a consumed claim id is remembered, so a repeated consume still answers true. */
  rememberMs: number;
}

export interface StatsSnapshot {
  waiting: number;
  active: number;
  claimed: number;
  window: AdmissionWindow;
  now: number;
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
  enter(queue: string, memberId: string, options?: { notAfter?: number }): Promise<MemberSnapshot>;
  position(queue: string, memberId: string): Promise<MemberSnapshot>;
  admit(queue: string, request: AdmitRequest): Promise<AdmitResult>;
  claim(queue: string, request: ClaimRequest): Promise<ClaimResult>;
  consume(queue: string, request: ConsumeRequest): Promise<boolean>;
  release(queue: string, request: SettleRequest): Promise<boolean>;
  leave(queue: string, memberId: string): Promise<boolean>;
  stats(queue: string): Promise<StatsSnapshot>;
  /** Optional: after the queue's state was lost (QueueStateLostError), accept what the store holds now. */
  acceptCurrentState?(queue: string): Promise<void>;
  /** Optional: the shape of the line, for the `positionCache` option of WaitingQueue. */
  queueSnapshot?(queue: string): Promise<QueueSnapshot>;
  /** Optional set-up checks (e.g. Redis eviction policy), run once per queue on first use. */
  warnings?(): Promise<StoreWarning[]>;
}
