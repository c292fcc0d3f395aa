// Entry tokens, claim ids and token ids: generation and cheap shape checks.

import { createHash, randomBytes } from 'node:crypto';
import { normalizeMemberId } from './member-id.js';
import { EntryTokenError } from './errors.js';
import type { ClaimResult } from './store/store.js';
import type { Claim } from './types.js';

/** 32 random bytes, base64url: 43 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const CLAIM_ID_SHAPE = /^[A-Za-z0-9_-]{22}$/;

/** A fresh entry token: 256 bits from the OS CSPRNG. */
export function newEntryToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * `count` fresh entry tokens from one read of the CSPRNG (an admission step sends up to 128):
 * each is 32 bytes of its own, as {@link newEntryToken}'s are, for one call instead of `count`.
 */
export function newEntryTokens(count: number): string[] {
  const bytes = randomBytes(32 * count);
  return Array.from({ length: count }, (_, i) => bytes.toString('base64url', 32 * i, 32 * (i + 1)));
}

/** A fresh claim id (128 bits): fences a claim and makes its scripts idempotent. */
export function newClaimId(): string {
  return randomBytes(16).toString('base64url');
}

/** A fresh id for one admit call, so a re-sent call admits nothing twice. */
export function newAdmitId(): string {
  return randomBytes(12).toString('base64url');
}

/** True when the string could be a token we issued; anything else is refused without a store call. */
export function hasTokenShape(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** True when the string could be a claim id we generated. */
export function hasClaimIdShape(claimId: unknown): claimId is string {
  return typeof claimId === 'string' && CLAIM_ID_SHAPE.test(claimId);
}

/**
 * The stable, non-secret id of a token: the first 128 bits of its SHA-256, hex.
 * Meant for a UNIQUE column in the order table; it cannot be turned back into the token.
 */
export function tokenIdOf(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

/** A claim we issued has a valid member id and a claim id of our shape; anything else cannot be settled (null). */
export function settleRequestOf(claim: Claim): { memberId: string; claimId: string } | null {
  if (typeof claim !== 'object' || claim === null) return null;
  const memberId = normalizeMemberId(claim.memberId);
  return hasClaimIdShape(claim.claimId) ? { memberId, claimId: claim.claimId } : null;
}

/** The error of a claim the store refused; `IN_USE` says when the other request's lease ends. */
export function claimRefusal(result: Exclude<ClaimResult, { status: 'CLAIMED' }>): EntryTokenError {
  if (result.status !== 'IN_USE') return new EntryTokenError(result.status);
  const { leaseExpiresAt, now } = result;
  const retryAfterSeconds = leaseExpiresAt !== undefined && now !== undefined ? Math.max(1, Math.ceil((leaseExpiresAt - now) / 1000)) : null;
  return new EntryTokenError('IN_USE', { retryAfterSeconds });
}
