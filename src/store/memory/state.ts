// The state MemoryStore keeps per queue, and the small rules every operation shares.
// Each operation lives in a sibling module (entry, admission, tokens, controls,
// snapshots) as a function of this state and the clock's `now`.

import type { Cohort } from './cohort.js';
import type { Lane } from '../../types.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { EMPTY_WINDOW } from '../../admission-window.js';
import type { QueueMode } from '../../controls.js';
import { OrderWindow } from '../../admission-control.js';
import { EntryCheckpoints, type WaitSlot } from '../../queue-figures.js';
import type { QueueTotals } from '../../types.js';
import type { AdmissionWindow, ControlsView, HeadMovesListener } from '../store.js';
import { WaitingLine } from '../waiting-line.js';
import type { Bucket } from './bucket.js';
import { PICKUP_GRACE_MS, type Pace } from '../../rates.js';

/** A token as the store keeps it; mirrors lua/includes/tokenRecord.lua. */
export interface TokenRecord {
  token: string;
  tokenExp: number;
  claimId: string | null;
  claimExp: number;
  /** While nobody has read the token (pickupTimeoutSeconds): when it is dropped; 0 once read. */
  pickupBy: number;
  /** Its lease lapsed and was counted as a failed order (mirrors removing it from the `leases` key). */
  leaseCounted?: boolean;
  /** When a release of it last counted as a failed order (at most once per ORDER_WINDOW_MS). */
  failedAt?: number;
}

export interface QueueState {
  /** The cohort of a shuffled pre-queue (./cohort.ts); absent before its first member. */
  cohort?: Cohort;
  /** Invite codes and lanes (./lanes.ts); absent before the first codes. */
  lanes?: LaneState;
  seq: number;
  waiting: WaitingLine;
  tokens: Map<string, TokenRecord>;
  /** claim id -> forget-after (ms). */
  consumed: Map<string, number>;
  /** The admission token bucket (./bucket.ts; mirrors meta bt/bts), null before the first step or net entry. */
  bucket: Bucket | null;
  window: AdmissionWindow;
  /** admit id -> forget-after (ms): a repeated id is a re-sent call (mirrors the `admits` key). */
  recentAdmits: Map<string, number>;
  controls: Controls;
  /** member -> last sign of life (ms), near the head only (mirrors the `seen` key). */
  seen: Map<string, number>;
  /** Totals since the queue began (mirrors meta te ta ab tc tx). */
  totals: QueueTotals;
  /** The wait of each minute's admissions, a ring of WAIT_SLOTS (mirrors meta w0 .. w9). */
  waitSlots: Array<WaitSlot | undefined>;
  /** Entry checkpoints (mirrors the `entries` key). */
  entries: EntryCheckpoints;
  /** identity key -> the members that took places under it (mirrors the `identities` key). */
  identities: Map<string, string[]>;
  /** Orders settled lately (mirrors meta ows .. opn). */
  orders: OrderWindow;
  /** The rate adaptive admission set, and when (mirrors meta ar, ae); null before. */
  adaptive: { rate: number; evaluatedAt: number } | null;
  /** The drop bucket (mirrors meta dt/dts; refilled by ./bucket.ts too), null before the first drop check. */
  dropBucket: Bucket | null;
  /** The pace of the line (mirrors meta pm pc pz pf), null before a step that left members waiting. */
  pace: Pace | null;
  /** Members admission steps took off the line (mirrors meta hm). */
  headMoves: number;
  /** Listeners of watchHeadMoves (the channel "<meta key>:moves" of RedisStore). */
  headMoveListeners: Set<HeadMovesListener>;
}

/** A queue's lanes once codes were added (mirrors meta ln, lc, lu<i>, and the `lanes` and `codes` keys). */
export interface LaneState {
  lanes: Lane[];
  /** lines[i]: lane i + 1. */
  lines: WaitingLine[];
  carries: number[];
  usesLeft: number[];
  codes: Map<string, { lane: string; usesLeft: number }>;
}

/** The controls as kept (mirrors lua/includes/controls.lua); undefined: never set. */
export interface Controls {
  mode?: QueueMode;
  message?: string;
  rate?: number;
  burst?: number;
  /** null: no cap. */
  maxActive?: number | null;
  opensAt?: number;
  shuffle?: boolean;
  seed?: string;
  commitment?: string;
  version: number;
  /** First score of the pre-queue, and the score base of entries after its opening. */
  preQueueFrom?: number;
  scoreBase?: number;
  /** Units of stock left (mirrors meta sk), the sold-out message (sm). */
  stock?: number;
  soldOutMessage?: string;
  /** Stock left minus the tokens in play, as the last admission step saw it (mirrors meta sa). */
  stockAvailable?: number;
  /** The safety net (mirrors meta cn); undefined: the caller's option. */
  safetyNet?: boolean;
}

/** A queue nobody has written yet. */
export function newQueueState(): QueueState {
  return {
    seq: 0,
    waiting: new WaitingLine(),
    tokens: new Map(),
    consumed: new Map(),
    bucket: null,
    window: EMPTY_WINDOW,
    recentAdmits: new Map(),
    controls: { version: 0 },
    seen: new Map(),
    totals: { entered: 0, admitted: 0, abandoned: 0, consumed: 0, expired: 0 },
    waitSlots: [],
    entries: new EntryCheckpoints(),
    identities: new Map(),
    orders: new OrderWindow(),
    adaptive: null,
    dropBucket: null,
    pace: null,
    headMoves: 0,
    headMoveListeners: new Set(),
  };
}

/** The moment a token stops existing: its TTL, pushed out by a live claim's lease, or its pick-up deadline and grace. */
export function deadlineOf(r: TokenRecord): number {
  if (r.claimId !== null && r.claimExp > r.tokenExp) return r.claimExp;
  return r.pickupBy > 0 && r.pickupBy + PICKUP_GRACE_MS < r.tokenExp ? r.pickupBy + PICKUP_GRACE_MS : r.tokenExp;
}

export function sameToken(a: string, b: string): boolean {
  // Equal-length digests, compared in constant time: nothing leaks about the stored token.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** A scheduled opening is still ahead (`now < opensAt`, as the scripts compare). */
export function beforeOpening(c: Controls, now: number): boolean {
  return c.opensAt !== undefined && now < c.opensAt;
}

/** The controls a position shows. */
export function controlsView(c: Controls, adaptiveRate: number | undefined): ControlsView {
  return {
    mode: c.mode ?? 'open',
    message: c.message ?? null,
    opensAt: c.opensAt ?? null,
    shuffle: c.shuffle === true,
    preQueueFrom: c.preQueueFrom ?? null,
    admitRatePerSecond: c.rate ?? null,
    admitBurst: c.burst ?? null,
    adaptiveRate: adaptiveRate ?? null,
    stockLeft: c.stock ?? null,
    stockAvailable: c.stockAvailable ?? null,
    safetyNet: c.safetyNet ?? null,
  };
}
