// The events of a WaitingQueue: their names and payloads, and the emitter that sends
// them, or a process warning for the background errors nobody listens to.

import { EventEmitter } from 'node:events';
import type { QueueControls } from './controls.js';
import type { StoreWarning } from './store/store.js';
import type { AdmittedMember } from './types.js';
import type { AdmitResult } from './store/store.js';

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

/** A listener of the {@link WaitingQueue} event `E`, called with that event's arguments. */
export type Listener<E extends keyof WaitingQueueEvents> = (...args: WaitingQueueEvents[E]) => void;

/** The queue's event emitter, with the fallbacks of the events that must never go unheard. */
export class QueueEvents {
  readonly #emitter = new EventEmitter();

  emit<E extends keyof WaitingQueueEvents>(event: E, ...args: WaitingQueueEvents[E]): void {
    this.#emitter.emit(event, ...args);
  }

  /** Whether anyone listens: a hot path builds an event's payload only then. */
  heard(event: keyof WaitingQueueEvents): boolean {
    return this.#emitter.listenerCount(event) > 0;
  }

  on<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): void {
    this.#emitter.on(event, listener as (...args: unknown[]) => void);
  }

  once<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): void {
    this.#emitter.once(event, listener as (...args: unknown[]) => void);
  }

  off<E extends keyof WaitingQueueEvents>(event: E, listener: Listener<E>): void {
    this.#emitter.off(event, listener as (...args: unknown[]) => void);
  }

  /** A background error: the `error` event, or a process warning when nobody listens. Never throws. */
  reportError(error: Error): void {
    if (this.#emitter.listenerCount('error') > 0) this.#emitter.emit('error', error);
    else process.emitWarning(`waitgate: ${error.message}`, { code: 'WAITGATE_BACKGROUND_ERROR' });
  }

  /** The end of an incident: the `recovered` event, or a process warning. */
  recovered(notice: RecoveryNotice): void {
    if (this.#emitter.listenerCount('recovered') > 0) this.#emitter.emit('recovered', notice);
    else
      process.emitWarning(`waitgate: the ${notice.source} works again after ${notice.failedCalls} failed calls (${Math.round(notice.durationMs / 1000)} s)`, {
        code: 'WAITGATE_RECOVERED',
      });
  }

  /** A set-up problem of the store: the `warning` event, or a process warning. */
  warn(warning: StoreWarning): void {
    if (this.#emitter.listenerCount('warning') > 0) this.#emitter.emit('warning', warning);
    else process.emitWarning(warning.message, { code: `WAITGATE_${warning.code}` });
  }
}

/** The payload of `admitted`: never the token; how long each waited, in seconds (null when unknown). */
export function admittedEvent(admitted: readonly (AdmitResult['admitted'][number] & { expiresAt: number })[]): AdmittedMember[] {
  return admitted.map(({ memberId, expiresAt, waitedMs }) => ({
    memberId,
    expiresAt,
    waitedSeconds: waitedMs === undefined || waitedMs === null ? null : waitedMs / 1000,
  }));
}
