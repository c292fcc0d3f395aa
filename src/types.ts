// The results a user of WaitingQueue sees. The store's side (the Store interface and
// its raw snapshots) is in store/store.ts.

import type { QueueMode } from './controls.js';

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
  /** Members dropped as abandoned since the queue began (silent for `abandonAfterSeconds` when their turn came). */
  abandoned: number;
}
