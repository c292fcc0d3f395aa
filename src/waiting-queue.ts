// WaitingQueue: the public API. Validates input, delegates each operation to the store, emits events.

import { parseAdmitterOptions, startReportingTimer, type Admitter, type AdmitterOptions } from './admitter.js';
import { AdmissionSteps, admitRequest, type StepResult } from './admission-steps.js';
import type { ControlsPatch, QueueControls } from './controls.js';
import type { ControlsLogEntry, SetControlsOptions } from './controls-log.js';
import { applyControls, keepLimits, readControls, readControlsLog, type ControlsHost } from './queue-controls.js';
import { normalizeMemberId, type MemberId } from './member-id.js';
import { parseQueueOptions, type QueueConfig, type WaitingQueueOptions } from './options.js';
import { parseEnterOptions, type QueueEnterOptions } from './enter-options.js';
import { PositionCache, WATCH_HEAD_MOVES, watchHeadMovesOf, type WatchHeadMoves } from './position-cache.js';
import { parseReleaseOptions, type ReleaseOptions } from './release-options.js';
import { LOOK_POSITION, presenceFor, type Presence } from './presence.js';
import { buildPosition } from './position.js';
import { queueStats } from './queue-figures.js';
import { claimRefusal, newClaimId, newEntryToken, newEntryTokens, settleRequestOf, tokenIdOf } from './tokens.js';
import { presenceHeadOf } from './rates.js';
import { entersWithToken, safetyNetRequest } from './safety-net.js';
import type { ControlsView, EnterOptions, MemberSnapshot, Store } from './store/store.js';
import type { Admission, Claim, MemberInspection, Position, PositionStatus, QueueStats } from './types.js';
import { withShadowed } from './shadowed.js';
import { QueueEvents, REPORT_ERROR, admittedEvent, type Listener, type RecoveryNotice, type SettledClaim, type WaitingQueueEvents } from './queue-events.js';
import { signedAdmissions, signedPosition, storeTokenOf, type EntryPassKeys } from './signing/pass-signer.js';
import { REVOCATION_RETAIN_MS, storeThat } from './store-capability.js';
import { readDrawReport, type DrawReport } from './draw-report.js';
import { STORE_CALL_CHANNEL, StoreCalls, type StoreCallMessage as StoreCallMessageOf } from './store-calls.js';
import { addCodes, type AddCodesOptions } from './invite-codes.js';

export { REPORT_ERROR, STORE_CALL_CHANNEL };
export type { Listener, RecoveryNotice, SettledClaim, WaitingQueueEvents };
/** A message of {@link STORE_CALL_CHANNEL}: one settled store call of a {@link WaitingQueue}. */
export type StoreCallMessage = StoreCallMessageOf<WaitingQueue>;

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
  readonly #events = new QueueEvents();
  readonly #calls: StoreCalls;
  readonly #cache: PositionCache | null;
  readonly #steps: AdmissionSteps;
  /**
   * The controls of the last answer: only a hint of the presence head sent with an enter;
   * what the answer carries decides (see #enter). Every figure is computed from the
   * controls read with the answer it concerns, never from this.
   */
  #lastControls: ControlsView | undefined;
  readonly #presence: Presence | null;
  /** @internal Where the store pushes this queue's admission steps, or null (the event streams listen). */
  readonly [WATCH_HEAD_MOVES]: WatchHeadMoves | null;

  /** @throws {@link WaitgateConfigError} naming an unknown or bad option. */
  constructor(options: WaitingQueueOptions) {
    this.#config = parseQueueOptions(options);
    this.#store = this.#config.store;
    this.name = this.#config.name;
    this.#calls = new StoreCalls(this.#store, this, this.name, this.#config.operationTimeoutMs, this.#events);
    this.#steps = new AdmissionSteps(
      this.#config,
      (count) => this.#admitStep(count),
      (error) => this.#events.reportError(error),
    );
    const cacheOptions = this.#config.positionCache;
    const store = this.#store;
    const watchHeadMoves = watchHeadMovesOf(store, this.name, this, REPORT_ERROR); // holds this queue weakly
    this.#cache = cacheOptions && new PositionCache(() => this.#calls.call('queueSnapshot', (s) => s.queueSnapshot!(this.name)), cacheOptions, watchHeadMoves);
    this[WATCH_HEAD_MOVES] = watchHeadMoves;
    this.#presence = presenceFor(this.#config, typeof store.touch === 'function', (batch) => this.#calls.call('touch', (s) => s.touch!(this.name, batch)));
    keepLimits(this.#controlsHost).catch((error: unknown) => this.#events.reportError(error as Error));
  }

  /** The options in force, defaults applied (times in milliseconds). */
  get config(): Readonly<Omit<QueueConfig, 'store' | 'signer'>> {
    const { store: _store, signer: _signer, ...config } = this.#config;
    return config;
  }

  /**
   * Joins the queue unless the member is already waiting or holds a token (then nothing changes:
   * the rank is kept, a `code` is neither checked nor spent). Safe to retry. See {@link QueueEnterOptions}
   * for `identity` (one place per identity) and `code` (an invite code's lane, see {@link addCodes}).
   * @returns the position after the call.
   * @throws {@link InvalidMemberIdError} before any store call; {@link IdentityLimitError} and
   *   {@link CodeInvalidError} (nothing written); {@link QueueClosedError}; {@link StoreUnavailableError}.
   */
  async enter(memberId: MemberId, options: QueueEnterOptions = {}): Promise<Position> {
    const id = normalizeMemberId(memberId);
    const entry = parseEnterOptions(options, this.#config.maxPlacesPerIdentity);
    const hintedHead = presenceHeadOf(this.#config, this.#lastControls);
    let snapshot = await this.#enter(id, entersWithToken(this.#config, this.#lastControls), hintedHead, entry);
    // Passthrough began since this instance last looked: again, with a token to issue at once.
    if (snapshot.needsToken) snapshot = await this.#enter(id, true, hintedHead, entry);
    if (snapshot.joined) {
      this.#presence?.forget(id); // a new place: its next poll near the head is a sign of life at once
      if (this.#events.heard('entered')) this.#events.emit('entered', { memberId: id, status: snapshot.status === 'READY' ? 'READY' : 'WAITING' });
    }
    // The store recorded a sign of life below the head this instance hinted; the head of
    // the controls read with the answer decides: a member between the two is noted now.
    const [head, rank] = [presenceHeadOf(this.#config, snapshot.controls), snapshot.status === 'WAITING' ? snapshot.rank : null];
    if (rank !== null && head !== undefined && rank < head && !(hintedHead !== undefined && rank < hintedHead))
      this.#presence?.note(id, 'seen', snapshot.now, snapshot.score ?? null);
    // No invalidation of the snapshot: a new member is behind everyone it shows, and the
    // snapshot's refresh limit must hold under the arrival surge (it is at most refreshMs old).
    this.#cache?.remember(id, snapshot);
    return signedPosition(this.#config.signer, this.#position(snapshot), id);
  }

  /** One enter call, with a fresh token for passthrough or the safety net when `withToken`. */
  #enter(id: string, withToken: boolean, presenceHead: number | undefined, entry: Pick<EnterOptions, 'identity' | 'code'>): Promise<MemberSnapshot> {
    const notAfter = performance.now() + this.#config.operationTimeoutMs;
    const c = this.#config;
    const token = withToken ? { token: newEntryToken(), tokenTtlMs: c.entryTokenTtlMs, safetyNet: safetyNetRequest(c) } : {};
    const options = { notAfter, presenceHead, ...token, ...entry };
    return this.#calls.call('enter', (s) => s.enter(this.name, id, options));
  }

  /**
   * Changes the queue's runtime controls for every instance (kept in the store): mode, message,
   * rate, burst, `maxActive`, a scheduled opening (`opensAt`, `shuffle`), stock, the safety net.
   * Validated like the options; atomic; a patch that changes nothing keeps the version. A change
   * is recorded in the controls log with `options.actor`. Emits `controls`.
   * @returns the controls in force after the change.
   * @throws {@link WaitgateConfigError} naming a bad or unknown field, a value beyond the limits
   *   (this instance's or those kept in the store), or what the queue's state forbids (a shuffled
   *   opening in the past, `shuffle` once the pre-queue has members); nothing is written. {@link StoreUnavailableError}.
   */
  async setControls(patch: ControlsPatch, options?: SetControlsOptions): Promise<QueueControls> {
    const controls = await applyControls(this.#controlsHost, patch, options);
    this.#events.emit('controls', controls);
    return controls;
  }

  /** After a shuffled opening: the cohort's salted hashes in entry order, the chain head and length, and the seed (docs/fair-entry.md). */
  drawReport = async (): Promise<DrawReport> => readDrawReport(storeThat(this.#store, ['cohort'], 'keep a cohort'), this.name, await this.controls());
  /** Stores invite codes of one of the `lanes` option's lanes, each good for `uses` entries (default 1); a code already stored is kept as is. @returns how many were added. */
  addCodes = (lane: string, codes: readonly string[], options?: AddCodesOptions): Promise<number> => addCodes(this.#controlsHost, lane, codes, options);
  /** The controls in force: those set through `setControls`, and this instance's options for the fields never set. */
  async controls(): Promise<QueueControls> {
    return readControls(this.#controlsHost);
  }

  /** The audit trail: the last `limit` (default 50, at most 1,000) changes of the controls, newest first. */
  async controlsLog(options?: { limit?: number }): Promise<ControlsLogEntry[]> {
    return readControlsLog(this.#controlsHost, options);
  }

  get #controlsHost(): ControlsHost {
    return { name: this.name, config: this.#config, calls: this.#calls };
  }

  /**
   * Reads where a member stands; changes nothing.
   * @throws {@link InvalidMemberIdError}; {@link StoreUnavailableError}.
   */
  async position(memberId: MemberId): Promise<Position> {
    return (await this[LOOK_POSITION](memberId, true)).position;
  }

  /** `position`; unless `pickUpNow`, a READY is recorded as read only by the `pickUp()` returned (a stream calls it once written). @internal */
  async [LOOK_POSITION](memberId: MemberId, pickUpNow: boolean): Promise<{ position: Position; pickUp: () => void }> {
    const id = normalizeMemberId(memberId);
    const estimated = await this.#cache?.estimate(id);
    const snapshot = estimated ?? (await this.#calls.call('position', (s) => s.position(this.name, id)));
    if (!estimated) this.#cache?.remember(id, snapshot);
    const position = await signedPosition(this.#config.signer, this.#position(snapshot, id, pickUpNow), id);
    return { position, pickUp: () => void (pickUpNow || this.#presence?.notePickUp(id, snapshot, this.#config.pickupTimeoutMs !== null)) };
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
   * Admits from the head of the queue, in FIFO order, as many as the shared token bucket, `admitBurst`,
   * `maxActive` and the queue length allow, and issues each a token (with `signing`, its signed pass).
   * Emits `admitted` when any member was admitted.
   *
   * Its work follows what can be admitted, not `admitBurst`: a step is sent with about as many fresh tokens
   * as the last step found admittable (at least 16); when the store finds more, a second step is sent at once.
   * @throws {@link StoreUnavailableError} (a repeat is safe: it can never exceed the bucket).
   */
  async admit(): Promise<Admission[]> {
    return signedAdmissions(this.#config.signer, await this.#admitUnsigned());
  }

  /** admit() without signing: the admitter's timer drops the result; a member's pass is signed when it looks. */
  async #admitUnsigned(): Promise<Admission[]> {
    // This instance's latest signs of life first: nobody it just answered is dropped.
    await this.#presence?.flush();
    const admitted = await this.#steps.admit();
    if (admitted.length > 0) {
      for (const a of admitted) this.#cache?.forget(a.memberId);
      this.#events.emit('admitted', admittedEvent(admitted));
    }
    return admitted;
  }

  /** One admission step with `count` fresh tokens. */
  async #admitStep(count: number): Promise<StepResult> {
    const c = this.#config;
    const result = await this.#calls.call('admit', (s) => s.admit(this.name, admitRequest(c, newEntryTokens(count))));
    this.#presence?.observe(result.expiresAt - c.entryTokenTtlMs);
    if (result.abandoned && result.abandoned.length > 0) {
      for (const memberId of result.abandoned) this.#cache?.forget(memberId);
      this.#events.emit(
        'abandoned',
        result.abandoned.map((memberId) => ({ memberId })),
      );
    }
    return { admittable: result.admittable, admitted: result.admitted.map((a) => ({ ...a, expiresAt: result.expiresAt })) };
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
    return startReportingTimer(() => this.#admitUnsigned(), intervalMs, this.#events);
  }

  /**
   * Claims the member's token for one request (READY -> CLAIMED under a lease of
   * `claimTtlSeconds`). Call `consume` after the order committed, `release` after it rolled back.
   * With `signing`, the token is a signed pass: one that does not verify is refused before any store call.
   * @throws {@link EntryTokenError} `MISSING` (empty), `INVALID` (not this member's live token), `IN_USE` (claimed by
   *   another live lease); {@link InvalidMemberIdError}; {@link StoreUnavailableError} (retrying is safe).
   */
  async claim(memberId: MemberId, token: string | null | undefined): Promise<Claim> {
    const id = normalizeMemberId(memberId);
    const tokenInStore = await storeTokenOf(this.#config.signer, id, token); // MISSING, INVALID: no store call
    const claimId = newClaimId();
    const request = { memberId: id, token: tokenInStore, claimId, leaseMs: this.#config.claimTtlMs };
    const result = await this.#calls.call('claim', (s) => s.claim(this.name, request));
    if (result.status !== 'CLAIMED') throw claimRefusal(result);
    const tokenId = tokenIdOf(tokenInStore);
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
    const settle = settleRequestOf(claim);
    if (!settle) return false;
    const rememberMs = this.#config.entryTokenTtlMs + this.#config.claimTtlMs;
    const consumed = await this.#calls.call('consume', (s) => s.consume(this.name, { ...settle, rememberMs, leaseMs: this.#config.claimTtlMs }));
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
    const settle = settleRequestOf(claim);
    if (!settle) return false;
    const released = await this.#calls.call('release', (s) => s.release(this.name, { ...settle, leaseMs: this.#config.claimTtlMs, failed }));
    if (released) this.#events.emit('released', { memberId: settle.memberId, tokenId: String(claim.tokenId) });
    return released;
  }

  /**
   * Removes the member from the queue, or drops its token.
   * @returns true if the member was waiting or held a live token.
   */
  async leave(memberId: MemberId): Promise<boolean> {
    const id = normalizeMemberId(memberId);
    const left = await this.#calls.call('leave', (s) => s.leave(this.name, id));
    this.#cache?.forget(id);
    this.#presence?.forget(id);
    if (left) this.#events.emit('left', { memberId: id });
    return left;
  }

  /**
   * After {@link QueueStateLostError} (the queue's state vanished from Redis, e.g. FLUSHALL or a restart without persistence)
   * and after an operator has looked: accept the state the store holds now on this instance, possibly an empty queue.
   * Call it on every app instance (restarting them does the same).
   */
  async reinitialize(): Promise<void> {
    this.#cache?.invalidate();
    await this.#store.acceptCurrentState?.(this.name);
  }

  /**
   * Counters of this queue, over every instance: members waiting and holding tokens now, the admission rate,
   * totals since the queue began and the wait of the last 10 minutes' admissions (kept in the store).
   */
  async stats(): Promise<QueueStats> {
    return withShadowed(queueStats(await this.#calls.call('stats', (store) => store.stats(this.name)), this.#config), this);
  }

  /**
   * One member's state, for an operator: never its token. Reading it changes nothing:
   * it is not a sign of life (abandonAfterSeconds) and picks no token up.
   * @throws {@link InvalidMemberIdError}; {@link WaitgateConfigError} when the store
   *   cannot inspect (a custom store); {@link StoreUnavailableError}.
   */
  async inspect(memberId: MemberId): Promise<MemberInspection> {
    const id = normalizeMemberId(memberId);
    const store = storeThat(this.#store, ['inspect'], 'inspect members');
    const inspection = await this.#calls.call('inspect', () => store.inspect(this.name, id));
    return { memberId: id, ...inspection };
  }

  /**
   * Ends the member's signed pass at once: its token is dropped (an order in flight then fails to consume)
   * and pass guards with `checkRevoked` refuse every pass issued before now. @returns true if it held a live token.
   */
  async revoke(memberId: MemberId): Promise<boolean> {
    const id = normalizeMemberId(memberId);
    const store = storeThat(this.#store, ['revoke', 'revokedAt'], 'revoke passes');
    const revoked = await this.#calls.call('revoke', () => store.revoke(this.name, id, { retainMs: REVOCATION_RETAIN_MS }));
    this.#cache?.forget(id);
    return revoked;
  }

  /** When the member's pass was last revoked (epoch ms, store time), or null: one store read. */
  async revokedAt(memberId: MemberId): Promise<number | null> {
    const id = normalizeMemberId(memberId);
    return this.#calls.call('revokedAt', () => storeThat(this.#store, ['revokedAt'], 'revoke passes').revokedAt(this.name, id));
  }

  /** The public JSON Web Key Set that verifies this queue's passes (`waitgate/pass`); no keys without `signing`. */
  jwks(): EntryPassKeys {
    return this.#config.signer?.jwks() ?? { keys: [] };
  }

  on<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.on(event, listener);
    return this;
  }

  once<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.once(event, listener);
    return this;
  }

  off<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): this {
    this.#events.off(event, listener);
    return this;
  }

  /** The public Position of a snapshot; a poll answered (`polled`: the member) is a sign of life, and a READY its pick-up if `pickUp`. */
  #position(snapshot: MemberSnapshot, polled?: string, pickUp = true): Position {
    if (snapshot.controls) this.#lastControls = snapshot.controls;
    if (polled !== undefined)
      this.#presence?.notePoll(polled, snapshot, presenceHeadOf(this.#config, snapshot.controls), pickUp && this.#config.pickupTimeoutMs !== null);
    return buildPosition(snapshot, this.#config, this.#config.pollingIntervals);
  }

  /**
   * Reports an error of background work (the admitter, an adapter's retried
   * consume) as an `error` event, or as a process warning when nobody listens.
   * Never throws.
   * @internal
   */
  [REPORT_ERROR](error: Error): void {
    this.#events.reportError(error);
  }
}
