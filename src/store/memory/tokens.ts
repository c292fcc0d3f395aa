// What happens to an issued token: claimed for an order, consumed, released, left,
// picked up (mirrors lua/claimToken-4.lua, consume-6.lua, release-4.lua, leave-7.lua
// and touchMembers-6.lua).

import { STOCK_ACTOR } from '../../controls-log.js';
import { logChange } from './controls-log.js';
import { ORDER_WINDOW_MS } from '../../admission-control.js';
import type { ClaimRequest, ClaimResult, ConsumeRequest, ReleaseRequest } from '../store.js';
import { deadlineOf, sameToken, type QueueState, type TokenRecord } from './state.js';
import { sellOne } from './stock.js';
import { laneOf } from './lanes.js';

export function claim(q: QueueState, now: number, request: ClaimRequest): ClaimResult {
  const record = q.tokens.get(request.memberId);
  if (!record || deadlineOf(record) <= now || !sameToken(request.token, record.token)) return { status: 'INVALID' };
  if (record.claimId === request.claimId) return { status: 'CLAIMED', expiresAt: record.claimExp };
  if (record.claimId !== null && record.claimExp > now) return { status: 'IN_USE', leaseExpiresAt: record.claimExp, now };
  record.claimId = request.claimId;
  record.claimExp = now + request.leaseMs;
  record.leaseCounted = false;
  record.pickupBy = 0; // a claim picks the token up
  return { status: 'CLAIMED', expiresAt: record.claimExp };
}

export function consume(q: QueueState, now: number, request: ConsumeRequest): boolean {
  if (q.consumed.has(request.claimId) && q.consumed.get(request.claimId)! > now) return true;
  const record = q.tokens.get(request.memberId);
  if (!record || record.claimId !== request.claimId || deadlineOf(record) <= now) return false;
  q.tokens.delete(request.memberId);
  for (const [claimId, forgetAt] of q.consumed) if (forgetAt <= now) q.consumed.delete(claimId);
  q.consumed.set(request.claimId, now + request.rememberMs);
  q.totals.consumed++;
  const before = q.controls;
  q.controls = sellOne(before);
  // The last unit: the queue closed itself (a new version, even if it was closed already), recorded in the controls log.
  const c = q.controls;
  if (c.version !== before.version) logChange(q, { at: now, actor: STOCK_ACTOR, patch: { mode: 'closed', message: c.message! }, version: c.version });
  if (!record.leaseCounted) q.orders.record(now, settled(record, now, request.leaseMs, false));
  return true;
}

export function release(q: QueueState, now: number, request: ReleaseRequest): boolean {
  const record = q.tokens.get(request.memberId);
  if (!record || record.claimId !== request.claimId || deadlineOf(record) <= now) return false;
  // Only a failed order path counts, once per token per order window (mirrors lua/release-4.lua).
  const last = record.failedAt ?? 0;
  if (!record.leaseCounted && request.failed !== false && (now - last >= ORDER_WINDOW_MS || now < last)) {
    record.failedAt = now;
    q.orders.record(now, settled(record, now, request.leaseMs, true));
  }
  record.claimId = null;
  record.claimExp = 0;
  return true;
}

/** One settled order for the order window: its latency from the claim when the lease is known. */
function settled(record: TokenRecord, now: number, leaseMs: number | undefined, failed: boolean) {
  const measured = leaseMs !== undefined && record.claimExp > 0;
  return { count: 1, failed: failed ? 1 : 0, latency: measured ? Math.max(0, now - (record.claimExp - leaseMs)) : 0, samples: measured ? 1 : 0 };
}

export function leave(q: QueueState, now: number, memberId: string): boolean {
  const wasWaiting = q.waiting.remove(memberId) || (laneOf(q, memberId)?.line.remove(memberId) ?? false);
  q.seen.delete(memberId);
  const record = q.tokens.get(memberId);
  const hadToken = record !== undefined && deadlineOf(record) > now;
  q.tokens.delete(memberId);
  return wasWaiting || hadToken;
}

/** Drops the member's token (a revoked pass): whether it held a live one. */
export function dropToken(q: QueueState, now: number, memberId: string): boolean {
  const record = q.tokens.get(memberId);
  q.tokens.delete(memberId);
  return record !== undefined && deadlineOf(record) > now;
}

export function touch(q: QueueState, now: number, request: { seen: readonly string[]; pickedUp: readonly string[] }): number {
  let recorded = 0;
  for (const memberId of request.seen) {
    if (!q.waiting.has(memberId) && !laneOf(q, memberId)) continue;
    q.seen.set(memberId, now);
    recorded++;
  }
  for (const memberId of request.pickedUp) {
    const record = q.tokens.get(memberId);
    if (!record || record.pickupBy === 0 || deadlineOf(record) <= now) continue;
    record.pickupBy = 0;
    recorded++;
  }
  return recorded;
}
