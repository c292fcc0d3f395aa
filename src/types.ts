// The shared vocabulary, a leaf module that imports nothing: the results a user of
// WaitingQueue sees, and the few names both the core and the stores speak (queue modes,
// a controls patch, the admission option, a minute of waits). The store's side (the
// Store interface and its raw snapshots) is in store/store.ts, which imports only this.

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
  /** How the queue lets members through now (`setControls`): `open`, `paused`, `passthrough` or `closed`. */
  queueMode: QueueMode;
  /** The operator's message for waiting members (e.g. why the sale is paused), or null. */
  message: string | null;
  /** While an opening is scheduled and still ahead: when, epoch ms (a page shows a countdown). Null otherwise. */
  opensAt: number | null;
  /** Units of stock left (`setControls({ stock })`); null without stock. */
  stockLeft: number | null;
  /**
   * WAITING with stock: the stock left covers this member after every token in play and
   * everyone ahead (rank + tokens in play < stock left). Null without stock or when not waiting.
   */
  likelyServed: boolean | null;
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
  /**
   * How long the member waited, from entering (or from the scheduled opening, for a
   * member who entered before it) to this admission, in seconds; null when the store
   * cannot tell (a custom store, or a member who entered before an upgrade).
   */
  waitedSeconds: number | null;
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

/** Transitions counted by the store since the queue began, over every instance. */
export interface QueueTotals {
  /** Members who joined the line (a repeated enter of a waiting member is not counted again). */
  entered: number;
  /** Tokens issued: by admission, and at once in passthrough. */
  admitted: number;
  /** Members dropped as abandoned (silent for `abandonAfterSeconds` when their turn came). */
  abandoned: number;
  /** Tokens used for good (a first successful `consume`). */
  consumed: number;
  /** Tokens that ended unused: past their TTL, or not picked up within `pickupTimeoutSeconds`. */
  expired: number;
}

/**
 * The wait of members admitted in the last 10 minutes (by whole minutes: the last 9
 * to 10), in seconds: from entering, or from the scheduled opening for those who
 * entered before it, to admission. p50 and p90 are read from a histogram whose bins
 * are 19% wide (at most 9% off), max is exact to the millisecond. All 0 when nobody was
 * admitted in that time (then `count` is 0).
 */
export interface WaitFigures {
  p50: number;
  p90: number;
  max: number;
  /** Admissions these figures are drawn from. */
  count: number;
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
  /**
   * The admission rate in force, for every instance: the one the controls pin, else
   * the one adaptive admission set (`admission: { mode: 'adaptive' }`), else this
   * instance's `admitRatePerSecond`. The same as `controls().admitRatePerSecond`.
   */
  admitRatePerSecond: number;
  /** Members dropped as abandoned since the queue began (silent for `abandonAfterSeconds` when their turn came); the same as `totals.abandoned`. */
  abandoned: number;
  /**
   * Queue-wide totals since the queue began, kept in the store (all 0 on a custom store that keeps none),
   * and `shadowed`: members the gate shadowed on THIS instance since it started (never written to the
   * store, so a shadowed member costs it nothing; sum it over instances yourself). See docs/fair-entry.md.
   */
  totals: QueueTotals & { shadowed: number };
  /** The wait of members admitted in the last 10 minutes, kept in the store. */
  waitSeconds: WaitFigures;
  /**
   * Invite-code lanes (SPEC §17), once codes were added: the default lane (members without a
   * code) first, then each named lane with its share, members waiting and codes' uses left.
   */
  lanes?: LaneStats[];
}

/**
 * What `inspect` shows of one member, for an operator: never the token, and reading
 * it changes nothing (it is not a sign of life, and does not pick a token up).
 */
export interface MemberInspection {
  memberId: string;
  /** CLAIMED: the token is held by an in-flight request (a live lease). */
  status: 'WAITING' | 'READY' | 'CLAIMED' | 'NOT_ENTERED';
  /** WAITING: 0-based place in the line. */
  rank: number | null;
  /** Members waiting in the queue now. */
  totalWaiting: number;
  /** READY or CLAIMED: when the unused token expires (or is dropped for not being picked up), epoch ms. */
  tokenExpiresAt: number | null;
  /** CLAIMED: when the lease ends, epoch ms. */
  leaseExpiresAt: number | null;
  /** READY with `pickupTimeoutSeconds`, token not read yet: it is dropped unless read by then, epoch ms. Null otherwise. */
  pickupBy: number | null;
  /** WAITING near the head (abandonAfterSeconds): its last sign of life, epoch ms; null if none recorded. */
  lastSeenAt: number | null;
  /** The store's clock when it answered, epoch ms. */
  now: number;
}

/** How the queue lets members through. */
export type QueueMode = 'open' | 'paused' | 'passthrough' | 'closed';

/** What `setControls` takes: any of these fields. */
export interface ControlsPatch {
  mode?: QueueMode;
  message?: string | null;
  /** A rate to admit at, for every instance; null: back to the instances' own (or adaptive admission's). */
  admitRatePerSecond?: number | null;
  admitBurst?: number;
  maxActive?: number | null;
  opensAt?: number | null;
  shuffle?: boolean;
  /** Units left to sell: each consumed token takes one, admission never puts more tokens in play than are left, at 0 the queue closes. Null: no stock. */
  stock?: number | null;
  /** The message of the queue once stock runs out; null: back to the default, "Sold out". */
  soldOutMessage?: string | null;
  /** The safety net for every instance (instant entry while nobody waits and the rate allows); overrides the `safetyNet` option. */
  safetyNet?: boolean;
}

/** The `limits` option of {@link WaitingQueueOptions}: guardrails on what `setControls` may set, whoever sends it. */
export interface ControlLimits {
  /** No pinned `admitRatePerSecond` above this. */
  maxRatePerSecond?: number;
  /** No `admitBurst` above this. */
  maxBurst?: number;
  /** No `maxActive` above this, nor `maxActive: null` (no cap). */
  maxActive?: number;
}

/** The `admission` option of {@link WaitingQueueOptions}. */
export type AdmissionOptions =
  | { mode: 'fixed' }
  | {
      mode: 'adaptive';
      /** Orders slower than this (from claim to consume or release, on average) count as unhealthy. */
      targetLatencyMs: number;
      /** The rate never falls below this. */
      minRatePerSecond: number;
      /** The rate never rises above this. */
      maxRatePerSecond: number;
    };

/** One minute of admissions: how many waited how long (bin -> count), and the longest wait. */
export interface WaitSlot {
  /** The minute, as floor(epoch ms / 60,000). */
  minute: number;
  maxMs: number;
  counts: Map<number, number>;
}

/** One polling tier: members with rank below `belowRank` poll every `seconds`. The last tier has no `belowRank`. */
export interface PollingTier {
  belowRank?: number;
  seconds: number;
}

/** One change of the controls, as the log keeps it. */
export interface ControlsLogEntry {
  /** Store time of the change, epoch ms. */
  at: number;
  /** Who made it (`setControls(patch, { actor })`, the dashboard's `authorize`, the command's `--actor`); null when not said. */
  actor: string | null;
  /** The patch as sent (for a sale that closed itself: the mode and message it set). */
  patch: ControlsPatch;
  /** The controls' version after it. */
  version: number;
  /** The commitment of a draw this change started (a shuffled opening), published with it. */
  drawCommitment?: string;
}

/** The options of `setControls`'s second argument. */
export interface SetControlsOptions {
  /** Who makes the change, recorded in the log (up to 200 characters). */
  actor?: string;
}

/** A lane for invite codes (SPEC §17) and its share of each admission step. */
export interface Lane {
  name: string;
  share: number;
}

/** One lane in `stats().lanes`: the default lane first, then the named ones in the order the store keeps them. */
export interface LaneStats {
  name: string;
  /** Its nominal share of each admission step (the default lane: what the named ones leave). */
  share: number;
  /** Members waiting in it. */
  waiting: number;
  /** Uses left on its codes (null for the default lane). */
  codeUsesLeft: number | null;
}
