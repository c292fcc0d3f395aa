// Shadowed members (SPEC §17): recognised on every later poll without a store write, by an
// in-process map (this instance) and by a cookie carrying an HMAC over the member id, its
// starting rank and when it was shadowed (any instance holding the same `shadowSecret`).
// Their place looks like anyone's: it starts at the back of the line as this instance last
// saw it and moves at the admission rate, but stops short of the head, for good.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { estimateWaitSeconds, pollingIntervalFor } from '../position.js';
import type { Position } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { dropOldest } from '../bounded.js';
import { cookieValue, requestHeader } from './request-header.js';

/** The cookie naming a shadowed member's place: a neutral name, as any client may read it. */
export const SHADOW_COOKIE = 'waitgate_place';
/** How long a member stays shadowed (the mark's life: map entry and cookie alike). */
const SHADOW_TTL_MS = 6 * 60 * 60 * 1000;
/** The most marks one instance keeps in memory; past it the oldest go (their cookie still works). */
const MAX_MARKS = 100_000;

/** A shadowed member: when, and the rank its place started at. */
export interface ShadowMark {
  at: number;
  rank: number;
}

/** The marks of one queue's routes, and the last real position they answered (what a shadow place copies). */
export class ShadowMarks {
  readonly #key: Buffer;
  readonly #marks = new Map<string, ShadowMark>();
  #last: Position | undefined;

  /** Without a secret, a random one: marks then hold on this instance only (and its in-memory map). */
  constructor(secret: string | undefined) {
    this.#key = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  /** Remembers a real position answered, so that a shadow place looks like the line as it is. */
  observe(position: Position): void {
    if (position.status === 'WAITING') this.#last = position;
  }

  get last(): Position | undefined {
    return this.#last;
  }

  /** The member's mark, from memory or from a valid cookie of the request; undefined if it is not shadowed. */
  find(memberId: string, req: unknown, now: number): ShadowMark | undefined {
    const kept = this.#marks.get(memberId);
    if (kept && now - kept.at < SHADOW_TTL_MS) return kept;
    if (kept) this.#marks.delete(memberId);
    const cookie = cookieValue(requestHeader(req, 'cookie'), SHADOW_COOKIE);
    const match = cookie === undefined ? null : /^(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
    if (!match) return undefined;
    const mark = { at: Number(match[1]), rank: Number(match[2]) };
    if (now - mark.at >= SHADOW_TTL_MS || mark.at > now + 60_000) return undefined;
    const expected = Buffer.from(this.#mac(memberId, mark));
    const given = Buffer.from(match[3]!);
    if (!timingSafeEqual(expected, given)) return undefined;
    this.#keep(memberId, mark);
    return mark;
  }

  /** Shadows a member now: its mark (starting at the back of the line) and the cookie carrying it. */
  create(memberId: string, now: number): { mark: ShadowMark; cookie: string } {
    const mark = { at: now, rank: this.#last?.currentTotalWaitingCount ?? 0 };
    this.#keep(memberId, mark);
    const value = `${mark.at}.${mark.rank}.${this.#mac(memberId, mark)}`;
    return { mark, cookie: `${SHADOW_COOKIE}=${value}; Path=/; Max-Age=${SHADOW_TTL_MS / 1000}; HttpOnly; SameSite=Lax` };
  }

  forget(memberId: string): void {
    this.#marks.delete(memberId);
  }

  clearCookie(): string {
    return `${SHADOW_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`;
  }

  #keep(memberId: string, mark: ShadowMark): void {
    this.#marks.delete(memberId); // re-inserted last: the map's order is the eviction order
    this.#marks.set(memberId, mark);
    dropOldest(this.#marks, MAX_MARKS);
  }

  #mac(memberId: string, mark: ShadowMark): string {
    return createHmac('sha256', this.#key).update(`waitgate-shadow\n${memberId}\n${mark.at}\n${mark.rank}`).digest('base64url');
  }
}

/**
 * The WAITING position of a shadowed member: its rank falls at the rate of the queue's options
 * from where it started, and stops at a quarter of it (at least 1), so it never reaches the head.
 * Mode, message, opening and whether ranks are shown copy the last real position answered.
 */
export function shadowPosition(queue: WaitingQueue, marks: ShadowMarks, mark: ShadowMark, now: number): Position {
  const { admitRatePerSecond: rate, pollingIntervals } = queue.config;
  const last = marks.last;
  const floor = Math.max(1, Math.ceil(mark.rank / 4));
  const rank = Math.max(floor, mark.rank - Math.floor(((now - mark.at) / 1000) * rate));
  const hidden = last !== undefined && last.rank === null; // a drawn pre-queue shows no rank
  const standing = last !== undefined && last.estimatedWaitSeconds === null; // paused, closed, before the opening
  return {
    status: 'WAITING',
    rank: hidden ? null : rank,
    currentTotalWaitingCount: Math.max(last?.currentTotalWaitingCount ?? 0, rank + 1),
    estimatedWaitSeconds: hidden || standing ? null : estimateWaitSeconds(rank, rate),
    pollingIntervalSeconds: standing ? last.pollingIntervalSeconds : pollingIntervalFor(hidden ? null : rank, pollingIntervals),
    entryToken: null,
    entryTokenExpiresAt: null,
    queueMode: last?.queueMode ?? 'open',
    message: last?.message ?? null,
    opensAt: last?.opensAt ?? null,
    // Looks like a real member's odds at that rank (it is never served: that is the point).
    stockLeft: last?.stockLeft ?? null,
    likelyServed: last?.stockLeft === null || last?.stockLeft === undefined ? null : rank < last.stockLeft,
  };
}
