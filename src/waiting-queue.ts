// WaitingQueue: the public API. Validates input, delegates each operation to the store, emits events.

import { channel } from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import { ADMISSION_WINDOW_MS, observedRate } from './admission-window.js';
import { parseAdmitterOptions, startTimer, type Admitter, type AdmitterOptions } from './admitter.js';
import { rateInForce } from './admission-control.js';
import { controlsInForce, newDrawSeed, parseControlsPatch, type ControlsPatch, type QueueControls } from './controls.js';
import { EntryTokenError, WaitgateConfigError, isWaitgateError } from './errors.js';
import { normalizeMemberId, type MemberId } from './member-id.js';
import { parseQueueOptions, type QueueConfig, type WaitingQueueOptions } from './options.js';
import { PositionCache, watchHeadMovesOf } from './position-cache.js';
import { parseReleaseOptions, type ReleaseOptions } from './release-options.js';
import { PRESENCE_FLUSH_MS, Presence } from './presence.js';
import { buildPosition } from './position.js';
import { waitFigures } from './queue-figures.js';
import { withTimeout } from './store/with-timeout.js';
import { hasClaimIdShape, hasTokenShape, newAdmitId, newClaimId, newEntryToken, tokenIdOf } from './tokens.js';
import { MAX_BURST, burstInForce, dropHorizonMs, presenceHead } from './rates.js';
import type { ControlsView, MemberSnapshot, Store, StoreWarning } from './store/store.js';
import type { Admission, AdmittedMember, Claim, MemberInspection, Position, PositionStatus, QueueStats } from './types.js';

/** Events of a {@link WaitingQueue} and their listener arguments. */
export interface WaitingQueueEvents {
  /** A member joined the line through this instance (READY: let through at once, in passthrough). Not for a repeated enter. */
  entered: [member: { memberId: string; status: 'WAITING' | 'READY' }];
  /** Members admitted by one `admit()` call, in FIFO order. Never carries tokens. */
  admitted: [members: AdmittedMember[]];
  /** A token claimed through this instance for one request. */
  claimed: [claim: SettledClaim & { expiresAt: number }];
  /** A claimed token used for good through this instance (a `consume` that answered true). */
  consumed: [claim: SettledClaim];
  /** A claimed token given back through this instance (a `release` that answered true). */
  released: [claim: SettledClaim];
  /** A member removed from the line, or whose token was dropped, through this instance (a `leave` that answered true). */
  left: [member: { memberId: string }];
  /** An error in background work (the admitter). Without a listener it goes to `process.emitWarning`. */
  error: [error: Error];
  /** A set-up problem of the store that can lose members, e.g. a Redis eviction policy other than noeviction. Once per queue. */
  warning: [warning: StoreWarning];
  /**
   * The admitter works again after failing: the end of an incident whose first error
   * was reported. Without a listener it goes to `process.emitWarning`.
   */
  recovered: [notice: RecoveryNotice];
  /** This instance changed the controls (`setControls`): the controls in force after it. */
  controls: [controls: QueueControls];
  /** Members dropped as abandoned by one of this instance's admission steps (silent for `abandonAfterSeconds` when their turn came). */
  abandoned: [members: Array<{ memberId: string }>];
}

/** A claim as the `claimed`, `consumed` and `released` events show it: never the token, nor the claim id that settles it. */
export interface SettledClaim {
  memberId: string;
  /** The token's stable, non-secret id (see {@link Claim.tokenId}). */
  tokenId: string;
}

/** Payload of the `recovered` event. */
export interface RecoveryNotice {
  /** What recovered. */
  source: 'admitter';
  /** Calls that failed during the incident (only the first, and any of another kind, were reported). */
  failedCalls: number;
  /** From the first failure to the recovery, ms. */
  durationMs: number;
}

/**
 * The queue's reporter of background errors, for waitgate's own adapters (a symbol,
 * so it is not part of the public API, and shared by every copy of the package).
 * @internal
 */
export const REPORT_ERROR: unique symbol = Symbol.for('waitgate.reportError') as never;

/**
 * The `node:diagnostics_channel` channel on which every store call of every queue is
 * published once it settled (only while someone subscribes: no cost otherwise), as a
 * {@link StoreCallMessage}. `waitgate/opentelemetry` records its durations.
 */
export const STORE_CALL_CHANNEL = 'waitgate:store';

/** A message of {@link STORE_CALL_CHANNEL}. */
export interface StoreCallMessage {
  queue: WaitingQueue;
  queueName: string;
  /** The store operation: enter, position, admit, claim, consume, release, leave, stats, queueSnapshot, touch, controls, setControls, inspect. */
  operation: string;
  /** From the call to its settling (or its timeout), ms. */
  durationMs: number;
  /** Set when the call failed. */
  error?: unknown;
}

const storeCalls = channel(STORE_CALL_CHANNEL);

/** Fresh tokens sent with an admit step when nothing suggests more can be admitted. */
const MIN_ADMIT_TOKENS = 16;

/** A listener of the {@link WaitingQueue} event `E`, called with that event's arguments. */
export type Listener<E extends keyof WaitingQueueEvents> = (...args: WaitingQueueEvents[E]) => void;

/**
 * A virtual waiting queue in front of an order API.
 *
 * @example
 * ```ts
 * const queue = new WaitingQueue({ store: new MemoryStore(), name: 'orders', admitRatePerSecond: 50 });
 * await queue.enter('member-1');          // { status: 'WAITING', rank: 0, ... }
 * await queue.admit();                     // [{ memberId: 'member-1', entryToken, expiresAt }]
 * const { entryToken } = (await queue.token('member-1'))!;
 * const claim = await queue.claim('member-1', entryToken);
 * // ... commit the order, storing claim.tokenId under a UNIQUE constraint ...
 * await queue.consume(claim);
 * ```
 */
export class WaitingQueue {
  /** The queue name. */
  readonly name: string;
  readonly #config: QueueConfig;
  readonly #store: Store;
  readonly #events = new EventEmitter();
  readonly #cache: PositionCache | null;
  #checkedStore = false;
  /** What the last admission step found admittable: the next one sends about that many tokens. */
  #lastAdmittable = 0;
  /** The queue was in passthrough at the last answer: a new member's enter carries a token. */
  #passthrough = false;
  /**
   * The controls of the last answer: only a hint of the presence head sent with an enter;
   * what the answer carries decides (see #enter). Every figure is computed from the
   * controls read with the answer it concerns, never from this.
   */
  #lastControls: ControlsView | undefined;
  readonly #presence: Presence | null;

  /** @throws {@link WaitgateConfigError} naming an unknown or bad option. */
  constructor(options: WaitingQueueOptions) {
    this.#config = parseQueueOptions(options);
    this.#store = this.#config.store;
    this.name = this.#config.name;
    const cacheOptions = this.#config.positionCache;
    const store = this.#store;
    const watchHeadMoves = watchHeadMovesOf(store, this.name, this, REPORT_ERROR); // holds this queue weakly
    this.#cache = cacheOptions && new PositionCache(() => this.#call('queueSnapshot', (s) => s.queueSnapshot!(this.name)), cacheOptions, watchHeadMoves);
    const { abandonAfterMs, holdSilentAfterMs, pickupTimeoutMs } = this.#config;
    const tracksPresence = abandonAfterMs !== null || pickupTimeoutMs !== null;
    // A sign of life is sent again after a quarter of abandonAfterSeconds, not on every
    // poll (at a million polling, per-poll records were most of Redis's work); the hold
    // at the head judges seconds of silence, so with it every poll near the head is sent.
    const resendAfterMs = abandonAfterMs !== null && holdSilentAfterMs === null ? abandonAfterMs / 4 : 0;
    this.#presence =
      tracksPresence && typeof this.#store.touch === 'function'
        ? new Presence((batch) => this.#call('touch', (s) => s.touch!(this.name, batch)), resendAfterMs)
        : null;
  }

  /** The options in force, defaults applied (times in milliseconds). */
  get config(): Readonly<Omit<QueueConfig, 'store'>> {
    const { store: _store, ...config } = this.#config;
    return config;
  }

  /**
   * Joins the queue unless the member is already waiting or holds a token; then it
   * changes nothing (the rank is kept). Safe to retry.
   * @returns the position after the call.
   * @throws {@link InvalidMemberIdError} before any store call; {@link StoreUnavailableError}.
   */
  async enter(memberId: MemberId): Promise<Position> {
    const id = normalizeMemberId(memberId);
    const hintedHead = this.#presenceHead(this.#lastControls);
    let snapshot = await this.#enter(id, this.#passthrough, hintedHead);
    // Passthrough began since this instance last looked: again, with a token to issue at once.
    if (snapshot.needsToken) snapshot = await this.#enter(id, true, hintedHead);
    if (snapshot.joined) {
      this.#presence?.forget(id); // a new place: its next poll near the head is a sign of life at once
      this.#events.emit('entered', { memberId: id, status: snapshot.status === 'READY' ? 'READY' : 'WAITING' });
    }
    // The store recorded a sign of life below the head this instance hinted; the head of
    // the controls read with the answer decides: a member between the two is noted now.
    const head = this.#presenceHead(snapshot.controls);
    if (
      this.#presence &&
      snapshot.status === 'WAITING' &&
      snapshot.rank !== null &&
      head !== undefined &&
      snapshot.rank < head &&
      !(hintedHead !== undefined && snapshot.rank < hintedHead)
    ) {
      this.#presence.note(id, 'seen', snapshot.now, snapshot.score ?? null);
    }
    // No invalidation of the snapshot: a new member is behind everyone it shows, and the
    // snapshot's refresh limit must hold under the arrival surge (it is at most refreshMs old).
    this.#cache?.remember(id, snapshot);
    return this.#position(snapshot);
  }

  /** One enter call, with a fresh token for passthrough when `withToken`. */
  async #enter(id: string, withToken: boolean, presenceHead: number | undefined): Promise<MemberSnapshot> {
    const notAfter = performance.now() + this.#config.operationTimeoutMs;
    const options = withToken ? { notAfter, presenceHead, token: newEntryToken(), tokenTtlMs: this.#config.entryTokenTtlMs } : { notAfter, presenceHead };
    return this.#call('enter', (s) => s.enter(this.name, id, options));
  }

  /**
   * Changes the queue's runtime controls, for every instance at once (they are kept in
   * the store): the mode (`open`, `paused`, `passthrough`, `closed`), a message for
   * waiting members, the rate, burst and `maxActive`, and a scheduled opening
   * (`opensAt`, optionally `shuffle`d). Validated like the constructor's options;
   * atomic; a patch that changes nothing changes nothing (the version stays).
   * Emits `controls`.
   * @returns the controls in force after the change.
   * @throws {@link WaitgateConfigError} naming a bad or unknown field, or what the
   *   queue's state forbids (a shuffled opening in the past, changing `shuffle` once
   *   the pre-queue has members); nothing is written then. {@link StoreUnavailableError}.
   */
  async setControls(patch: ControlsPatch): Promise<QueueControls> {
    const valid = parseControlsPatch(patch);
    const store = this.#controlsStore();
    const { seed, commitment } = newDrawSeed();
    await this.#call('setControls', () => store.setControls!(this.name, { patch: valid, seed, commitment }));
    const controls = await this.controls();
    this.#events.emit('controls', controls);
    return controls;
  }

  /** The controls in force: those set through `setControls`, and this instance's options for the fields never set. */
  async controls(): Promise<QueueControls> {
    const store = this.#controlsStore();
    const stored = await this.#call('controls', () => store.controls!(this.name));
    return controlsInForce(stored, this.#config);
  }

  #controlsStore(): Store {
    if (typeof this.#store.setControls !== 'function' || typeof this.#store.controls !== 'function') {
      throw new WaitgateConfigError('store', 'does not keep runtime controls (setControls/controls); RedisStore and MemoryStore do');
    }
    return this.#store;
  }

  /**
   * Reads where a member stands; changes nothing.
   * @throws {@link InvalidMemberIdError}; {@link StoreUnavailableError}.
   */
  async position(memberId: MemberId): Promise<Position> {
    const id = normalizeMemberId(memberId);
    const estimated = await this.#cache?.estimate(id);
    if (estimated) return this.#position(estimated, id);
    const snapshot = await this.#call('position', (s) => s.position(this.name, id));
    this.#cache?.remember(id, snapshot);
    return this.#position(snapshot, id);
  }

  /**
   * How far from the head a waiting member's calls are recorded as signs of life
   * (src/rates.ts presenceHead), from the rate and burst in force in `controls` (as read
   * with an answer; the options where a store shows none). Undefined when abandonment is off.
   */
  #presenceHead(controls: ControlsView | undefined): number | undefined {
    const after = this.#config.abandonAfterMs;
    if (after === null) return undefined;
    const rate = rateInForce(controls?.admitRatePerSecond, controls?.adaptiveRate, this.#config);
    return presenceHead(rate, burstInForce(controls?.admitBurst, rate, this.#config), after);
  }

  /** The member's status alone. */
  async state(memberId: MemberId): Promise<PositionStatus> {
    return (await this.position(memberId)).status;
  }

  /** The member's live token, or null when it holds none. */
  async token(memberId: MemberId): Promise<{ entryToken: string; expiresAt: number } | null> {
    const p = await this.position(memberId);
    return p.status === 'READY' && p.entryToken !== null && p.entryTokenExpiresAt !== null
      ? { entryToken: p.entryToken, expiresAt: p.entryTokenExpiresAt }
      : null;
  }

  /**
   * Admits from the head of the queue, in FIFO order, as many as the shared token
   * bucket, `admitBurst`, `maxActive` and the queue length allow, and issues each a
   * token. Emits `admitted` when any member was admitted.
   *
   * Its work follows what can be admitted, not `admitBurst`: a step is sent with about
   * as many fresh tokens as the last step found admittable (at least 16); when the
   * store finds more admittable, a second step is sent at once with exactly that many.
   * @throws {@link StoreUnavailableError} (a repeat is safe: it can never exceed the bucket).
   */
  async admit(): Promise<Admission[]> {
    const c = this.#config;
    // This instance's latest signs of life first: nobody it just answered is dropped.
    await this.#presence?.flush();
    // A burst that follows the rate can be as large as the rate an operator sets.
    const sent = Math.min(c.burstFollowsRate ? MAX_BURST : c.admitBurst, Math.max(MIN_ADMIT_TOKENS, Math.ceil(this.#lastAdmittable * 1.25)));
    const first = await this.#admitStep(sent);
    let result = first;
    // A custom store that does not say what was admittable gets the whole burst each time, as before.
    this.#lastAdmittable = first.admittable ?? c.admitBurst;
    // Only a step that used every token it was sent can have left admittable members
    // behind: one that admitted fewer ran out of live members (members held at the head
    // count as waiting in `admittable` but take no admission) or of drops.
    const more = first.admitted.length < sent ? 0 : (first.admittable ?? 0) - first.admitted.length;
    if (more > 0) {
      try {
        const second = await this.#admitStep(more);
        result = { ...second, admitted: [...first.admitted, ...second.admitted] };
      } catch (error) {
        // The first step's members hold tokens: they are returned and announced; the
        // second step's failure is reported (a repeat is safe: the bucket bounds it).
        this[REPORT_ERROR](error instanceof Error ? error : new Error(String(error)));
      }
    }
    const admissions = result.admitted.map((a) => ({ memberId: a.memberId, entryToken: a.entryToken, expiresAt: a.expiresAt }));
    if (admissions.length > 0) {
      for (const a of admissions) this.#cache?.forget(a.memberId);
      this.#events.emit(
        'admitted',
        result.admitted.map(({ memberId, expiresAt, waitedMs }) => ({
          memberId,
          expiresAt,
          waitedSeconds: waitedMs === undefined || waitedMs === null ? null : waitedMs / 1000,
        })),
      );
    }
    return admissions;
  }

  /** One admission step with `count` fresh tokens. */
  async #admitStep(count: number) {
    const c = this.#config;
    const tokens = Array.from({ length: count }, newEntryToken);
    const result = await this.#call('admit', (s) =>
      s.admit(this.name, {
        ratePerSecond: c.admitRatePerSecond,
        burst: c.admitBurst,
        burstFollowsRate: c.burstFollowsRate,
        maxActive: c.maxActive,
        tokenTtlMs: c.entryTokenTtlMs,
        windowMs: ADMISSION_WINDOW_MS,
        admitId: newAdmitId(),
        tokens,
        abandonAfterMs: c.abandonAfterMs,
        holdSilentAfterMs: c.holdSilentAfterMs,
        pickupTimeoutMs: c.pickupTimeoutMs,
        dropHorizonMs: c.abandonAfterMs === null ? null : dropHorizonMs(Math.max(...c.pollingIntervals.map((tier) => tier.seconds)), PRESENCE_FLUSH_MS),
        adaptive: c.admission.mode === 'adaptive' ? c.admission : null,
      }),
    );
    this.#presence?.observe(result.expiresAt - c.entryTokenTtlMs);
    if (result.abandoned && result.abandoned.length > 0) {
      for (const memberId of result.abandoned) this.#cache?.forget(memberId);
      this.#events.emit(
        'abandoned',
        result.abandoned.map((memberId) => ({ memberId })),
      );
    }
    return {
      admittable: result.admittable,
      admitted: result.admitted.map((a) => ({ ...a, expiresAt: result.expiresAt })),
    };
  }

  /**
   * Calls `admit()` every `intervalMs` (default 1000) at a fixed rate, on an unref'd
   * timer. Safe to run on every instance. Errors never leave the timer: the first of
   * an incident (and the first of another kind) is emitted as an `error` event, the
   * rest are counted, and the end of the incident is a `recovered` event.
   * @throws {@link WaitgateConfigError} for an unknown or bad option (e.g. `interval`).
   */
  startAdmitter(options: AdmitterOptions = {}): Admitter {
    const { intervalMs } = parseAdmitterOptions(options);
    let incident: { since: number; failedCalls: number; lastCode: string } | null = null;
    return startTimer(async () => {
      try {
        await this.admit();
        if (incident) {
          this.#recovered({ source: 'admitter', failedCalls: incident.failedCalls, durationMs: Date.now() - incident.since });
          incident = null;
        }
      } catch (caught) {
        const error = caught instanceof Error ? caught : new Error(String(caught));
        const code = isWaitgateError(error) ? error.code : error.name;
        incident ??= { since: Date.now(), failedCalls: 0, lastCode: '' };
        incident.failedCalls++;
        if (incident.lastCode !== code) this[REPORT_ERROR](error);
        incident.lastCode = code;
      }
    }, intervalMs);
  }

  /**
   * Claims the member's token for one request (READY -> CLAIMED under a lease of
   * `claimTtlSeconds`). Call `consume` after the order committed, `release` after it rolled back.
   * @throws {@link EntryTokenError} `MISSING` (empty), `INVALID` (not this member's
   *   live token), `IN_USE` (claimed by another live lease); {@link InvalidMemberIdError};
   *   {@link StoreUnavailableError} (retrying is safe).
   */
  async claim(memberId: MemberId, token: string | null | undefined): Promise<Claim> {
    const id = normalizeMemberId(memberId);
    if (token === undefined || token === null || token === '') throw new EntryTokenError('MISSING');
    if (typeof token !== 'string' || !hasTokenShape(token)) throw new EntryTokenError('INVALID');
    const claimId = newClaimId();
    const result = await this.#call('claim', (s) => s.claim(this.name, { memberId: id, token, claimId, leaseMs: this.#config.claimTtlMs }));
    if (result.status === 'IN_USE') {
      const { leaseExpiresAt, now } = result;
      const retryAfterSeconds = leaseExpiresAt !== undefined && now !== undefined ? Math.max(1, Math.ceil((leaseExpiresAt - now) / 1000)) : null;
      throw new EntryTokenError('IN_USE', { retryAfterSeconds });
    }
    if (result.status !== 'CLAIMED') throw new EntryTokenError(result.status);
    const tokenId = tokenIdOf(token);
    this.#events.emit('claimed', { memberId: id, tokenId, expiresAt: result.expiresAt });
    return { memberId: id, claimId, tokenId, expiresAt: result.expiresAt };
  }

  /**
   * Uses the claimed token for good, after the order committed.
   * @returns true if no other claim took the token over and it had not expired
   *   (repeating a successful consume answers true again); false otherwise.
   * @throws {@link StoreUnavailableError} (retrying is safe).
   */
  async consume(claim: Claim): Promise<boolean> {
    const settle = this.#settleRequest(claim);
    if (!settle) return false;
    const rememberMs = this.#config.entryTokenTtlMs + this.#config.claimTtlMs;
    const consumed = await this.#call('consume', (s) => s.consume(this.name, { ...settle, rememberMs, leaseMs: this.#config.claimTtlMs }));
    if (consumed) this.#events.emit('consumed', { memberId: settle.memberId, tokenId: String(claim.tokenId) });
    return consumed;
  }

  /**
   * Gives the claimed token back after the order rolled back (CLAIMED -> READY),
   * so the member can retry with it until it expires. With adaptive admission it
   * counts as a failed order unless `{ failed: false }` says the order path did not
   * fail (a 4xx answer: validation, out of stock, payment declined).
   * @returns true if this claim still held the token.
   * @throws {@link WaitgateConfigError} for a bad option; {@link StoreUnavailableError} (retrying is safe).
   */
  async release(claim: Claim, options?: ReleaseOptions): Promise<boolean> {
    const { failed } = parseReleaseOptions(options);
    const settle = this.#settleRequest(claim);
    if (!settle) return false;
    const released = await this.#call('release', (s) => s.release(this.name, { ...settle, leaseMs: this.#config.claimTtlMs, failed }));
    if (released) this.#events.emit('released', { memberId: settle.memberId, tokenId: String(claim.tokenId) });
    return released;
  }

  /**
   * Removes the member from the queue, or drops its token.
   * @returns true if the member was waiting or held a live token.
   */
  async leave(memberId: MemberId): Promise<boolean> {
    const id = normalizeMemberId(memberId);
    const left = await this.#call('leave', (s) => s.leave(this.name, id));
    this.#cache?.forget(id);
    this.#presence?.forget(id);
    if (left) this.#events.emit('left', { memberId: id });
    return left;
  }

  /**
   * After {@link QueueStateLostError} (the queue's state vanished from Redis, e.g.
   * FLUSHALL or a restart without persistence) and after an operator has looked:
   * accept the state the store holds now on this instance, possibly an empty
   * queue. Call it on every app instance (restarting them does the same).
   */
  async reinitialize(): Promise<void> {
    this.#cache?.invalidate();
    await this.#store.acceptCurrentState?.(this.name);
  }

  /**
   * Counters of this queue, over every instance: members waiting and holding tokens
   * now, the admission rate, totals since the queue began and the wait of the last
   * 10 minutes' admissions (kept in the store).
   */
  async stats(): Promise<QueueStats> {
    const s = await this.#call('stats', (store) => store.stats(this.name));
    const abandoned = s.abandoned ?? s.totals?.abandoned ?? 0;
    return {
      waiting: s.waiting,
      active: s.active,
      claimed: s.claimed,
      admittedPerSecond: observedRate(s.window, s.now),
      admitRatePerSecond: rateInForce(s.pinnedRate, s.adaptiveRate, this.#config),
      abandoned,
      totals: s.totals ?? { entered: 0, admitted: 0, abandoned, consumed: 0, expired: 0 },
      waitSeconds: waitFigures(s.waitSlots ?? [], s.now),
    };
  }

  /**
   * One member's state, for an operator: never its token. Reading it changes nothing:
   * it is not a sign of life (abandonAfterSeconds) and picks no token up.
   * @throws {@link InvalidMemberIdError}; {@link WaitgateConfigError} when the store
   *   cannot inspect (a custom store); {@link StoreUnavailableError}.
   */
  async inspect(memberId: MemberId): Promise<MemberInspection> {
    const id = normalizeMemberId(memberId);
    if (typeof this.#store.inspect !== 'function') throw new WaitgateConfigError('store', 'cannot inspect members (inspect); RedisStore and MemoryStore can');
    const inspection = await this.#call('inspect', (s) => s.inspect!(this.name, id));
    return { memberId: id, ...inspection };
  }

  on<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  once<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.once(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** The public Position of a snapshot; a poll answered (`polled`: the member) is a sign of life. */
  #position(snapshot: MemberSnapshot, polled?: string): Position {
    if (snapshot.controls) {
      this.#passthrough = snapshot.controls.mode === 'passthrough';
      this.#lastControls = snapshot.controls;
    }
    if (polled !== undefined && this.#presence) {
      const head = this.#presenceHead(snapshot.controls);
      if (snapshot.status === 'WAITING' && head !== undefined && snapshot.rank !== null && snapshot.rank < head)
        this.#presence.note(polled, 'seen', snapshot.now, snapshot.score ?? null);
      if (snapshot.status === 'READY' && this.#config.pickupTimeoutMs !== null) this.#presence.note(polled, 'pickedUp', snapshot.now);
    }
    return buildPosition(snapshot, this.#config, this.#config.pollingIntervals);
  }

  /** A claim we issued has a valid member id and a claim id of our shape; anything else cannot be settled. */
  #settleRequest(claim: Claim): { memberId: string; claimId: string } | null {
    if (typeof claim !== 'object' || claim === null) return null;
    const memberId = normalizeMemberId(claim.memberId);
    return hasClaimIdShape(claim.claimId) ? { memberId, claimId: claim.claimId } : null;
  }

  /** One store call, bounded by operationTimeoutMs; the first also runs the store's set-up checks. */
  #call<T>(operation: string, run: (store: Store) => Promise<T>): Promise<T> {
    if (!this.#checkedStore) {
      this.#checkedStore = true;
      void this.#checkStore();
    }
    if (!storeCalls.hasSubscribers) return withTimeout(operation, this.#config.operationTimeoutMs, () => run(this.#store));
    const started = performance.now();
    const publish = (error?: unknown) => {
      const message: StoreCallMessage = { queue: this, queueName: this.name, operation, durationMs: performance.now() - started };
      if (error !== undefined) message.error = error;
      storeCalls.publish(message);
    };
    return withTimeout(operation, this.#config.operationTimeoutMs, () => run(this.#store)).then(
      (value) => {
        publish();
        return value;
      },
      (error: unknown) => {
        publish(error);
        throw error;
      },
    );
  }

  async #checkStore(): Promise<void> {
    const store = this.#store;
    if (!store.warnings) return;
    let warnings: StoreWarning[];
    try {
      warnings = await withTimeout('warnings', this.#config.operationTimeoutMs, () => store.warnings!());
    } catch {
      this.#checkedStore = false; // the store is down; check again on a later call
      return;
    }
    for (const warning of warnings) {
      if (this.#events.listenerCount('warning') > 0) this.#events.emit('warning', warning);
      else process.emitWarning(warning.message, { code: `WAITGATE_${warning.code}` });
    }
  }

  /**
   * Reports an error of background work (the admitter, an adapter's retried
   * consume) as an `error` event, or as a process warning when nobody listens.
   * Never throws.
   * @internal
   */
  [REPORT_ERROR](error: Error): void {
    if (this.#events.listenerCount('error') > 0) this.#events.emit('error', error);
    else process.emitWarning(`waitgate: ${error.message}`, { code: 'WAITGATE_BACKGROUND_ERROR' });
  }

  #recovered(notice: RecoveryNotice): void {
    if (this.#events.listenerCount('recovered') > 0) this.#events.emit('recovered', notice);
    else
      process.emitWarning(`waitgate: the ${notice.source} works again after ${notice.failedCalls} failed calls (${Math.round(notice.durationMs / 1000)} s)`, {
        code: 'WAITGATE_RECOVERED',
      });
  }
}
