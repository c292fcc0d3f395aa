// Entering the line and reading one member's place (mirrors lua/enterIfAbsent-10.lua
// and lua/position-4.lua).

import { drawScore } from '../../controls.js';
import { CodeInvalidError, QueueClosedError } from '../../errors.js';
import { codeLaneFor, joinLane, laneOf, laneWaiting } from './lanes.js';
import { foldCohort } from './cohort.js';
import { takeIdentityPlace } from './identities.js';
import type { EnterOptions, MemberSnapshot } from '../store.js';
import { issueAtOnce, netTakes } from './safety-net.js';
import { beforeOpening, controlsView, deadlineOf, type QueueState } from './state.js';

/** `options.notAfter` is not needed here: an in-process call cannot arrive late. */
export function enter(q: QueueState, memberId: string, now: number, options: EnterOptions): MemberSnapshot {
  // An invite code is judged before anything is written.
  const laneIndex = options.code === undefined ? null : codeLaneFor(q, memberId, options.code, now);
  if (laneIndex === false) throw new CodeInvalidError();
  const record = q.tokens.get(memberId);
  if (record && deadlineOf(record) <= now) {
    q.tokens.delete(memberId);
    q.totals.expired++;
  }
  const held = q.tokens.get(memberId);
  if (held) held.pickupBy = 0; // answering READY: the token is picked up
  if (held || q.waiting.has(memberId) || laneOf(q, memberId)) return present(q, memberId, now, options.presenceHead);
  const c = q.controls;
  if (c.mode === 'closed') throw new QueueClosedError(c.message ?? null);
  // Passthrough lets a new member through, except before a scheduled opening (then it
  // pre-queues) and with stock (then it joins the line: admission keeps within the stock).
  const letThrough = c.mode === 'passthrough' && !beforeOpening(c, now) && c.stock === undefined;
  if (letThrough && (options.token === undefined || options.tokenTtlMs === undefined)) return { ...memberSnapshot(q, memberId, now), needsToken: true };
  // One place per identity: refused before anything is written; past it every path takes a place.
  if (options.identity) takeIdentityPlace(q, options.identity, memberId, now);
  if (letThrough) {
    issueAtOnce(q, memberId, now, options.token!, options.tokenTtlMs!);
    return { ...memberSnapshot(q, memberId, now), joined: true };
  }
  // The safety net: nobody waiting, and the bucket, maxActive and stock allow.
  if (netTakes(q, now, options)) {
    issueAtOnce(q, memberId, now, options.token!, options.tokenTtlMs!);
    return { ...memberSnapshot(q, memberId, now), joined: true };
  }
  const seq = ++q.seq;
  const preQueue = beforeOpening(c, now) && c.preQueueFrom !== undefined;
  if (laneIndex !== null) {
    // Into the code's lane and one use of the code spent, in this one step.
    joinLane(q, memberId, laneIndex, options.code!, seq);
    q.totals.entered++;
    if (!preQueue) q.entries.note((c.scoreBase ?? 0) + seq, now);
    return { ...present(q, memberId, now, options.presenceHead), joined: true };
  }
  const score = preQueue ? c.preQueueFrom! + (c.shuffle && c.seed !== undefined ? drawScore(c.seed, memberId) : seq) : (c.scoreBase ?? 0) + seq;
  q.waiting.insert(memberId, score);
  if (preQueue && c.shuffle && c.seed !== undefined) q.cohort = foldCohort(q.cohort, c.seed, memberId);
  q.totals.entered++;
  // A pre-queue place waits from the opening; any other from its entry checkpoint.
  if (!preQueue) q.entries.note(score, now);
  return { ...present(q, memberId, now, options.presenceHead), joined: true };
}

/** The member's snapshot after an enter; a waiting member near the head (rank below `presenceHead`) is seen now. */
function present(q: QueueState, memberId: string, now: number, presenceHead: number | undefined): MemberSnapshot {
  const snapshot = memberSnapshot(q, memberId, now);
  if (snapshot.rank !== null && presenceHead !== undefined && snapshot.rank < presenceHead) q.seen.set(memberId, now);
  return snapshot;
}

/** One member's place: READY with its token, WAITING at a rank, or NOT_ENTERED. */
export function memberSnapshot(q: QueueState, memberId: string, now: number): MemberSnapshot {
  const record = q.tokens.get(memberId);
  const ready = record !== undefined && deadlineOf(record) > now;
  // A member of a lane: its rank counts the members ahead in its own lane.
  const line = ready || q.waiting.has(memberId) ? q.waiting : (laneOf(q, memberId)?.line ?? q.waiting);
  const rank = ready ? null : line.rank(memberId);
  const snapshot: MemberSnapshot = {
    status: ready ? 'READY' : rank !== null ? 'WAITING' : 'NOT_ENTERED',
    rank,
    totalWaiting: q.waiting.size + laneWaiting(q),
    entryToken: ready ? record.token : null,
    entryTokenExpiresAt: ready ? record.tokenExp : null,
    window: q.window,
    now,
    score: rank === null ? null : line.seqOf(memberId),
    controls: controlsView(q.controls, q.adaptive?.rate),
  };
  if (q.lanes) snapshot.lanes = q.lanes.lanes;
  return snapshot;
}
