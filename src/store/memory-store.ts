// MemoryStore: the same semantics as RedisStore, in process, with an injectable clock.
// The rules live in src/store/memory/, one module per concern, each mirroring its
// Lua scripts; this class is their public face.

import { z } from 'zod';
import { parseStrict } from '../options.js';
import type { MemberInspection } from '../types.js';
import type {
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  ConsumeRequest,
  AddCodesRequest,
  ControlsRequest,
  EnterOptions,
  HeadMovesListener,
  HeadMovesWatch,
  MemberSnapshot,
  QueueSnapshot,
  ReleaseRequest,
  StatsSnapshot,
  Store,
  StoredControls,
  CohortPage,
} from './store.js';
import { admit } from './memory/admission.js';
import { addCodes } from './memory/lanes.js';
import { cohortPage } from './memory/cohort.js';
import { setControls, storedControls } from './memory/controls.js';
import { controlsLog } from './memory/controls-log.js';
import type { ControlsLogEntry } from '../controls-log.js';
import { enter, memberSnapshot } from './memory/entry.js';
import { inspect, queueSnapshot, stats } from './memory/snapshots.js';
import { newQueueState, type QueueState } from './memory/state.js';
import { claim, consume, dropToken, leave, release, touch } from './memory/tokens.js';
import { Revocations } from './memory/revocations.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock, epoch ms. Tests inject one to move time without sleeping. Default `Date.now`. */
  now?: () => number;
}

const optionsSchema = z.strictObject({
  now: z.custom<() => number>((f) => typeof f === 'function', 'must be a function returning epoch milliseconds').optional(),
});

/**
 * A {@link Store} kept in this process: for tests and single-instance use. Same
 * semantics as `RedisStore`, each operation one synchronous step; time comes from
 * the injected `now()`, so tests can expire tokens and leases without sleeping.
 *
 * @example
 * ```ts
 * let now = Date.now();
 * const store = new MemoryStore({ now: () => now });
 * now += 301_000; // every unused 300 s token is now expired
 * ```
 */
export class MemoryStore implements Store {
  readonly #now: () => number;
  readonly #queues = new Map<string, QueueState>();
  readonly #revocations = new Revocations();

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = parseStrict(optionsSchema, options).now ?? Date.now;
  }

  /** `options.notAfter` is not needed here: an in-process call cannot arrive late. */
  async enter(queue: string, memberId: string, options: EnterOptions = {}): Promise<MemberSnapshot> {
    return enter(this.#queue(queue), memberId, this.#now(), options);
  }

  async position(queue: string, memberId: string): Promise<MemberSnapshot> {
    return memberSnapshot(this.#queue(queue), memberId, this.#now());
  }

  async admit(queue: string, request: AdmitRequest): Promise<AdmitResult> {
    return admit(this.#queue(queue), this.#now(), request);
  }

  async claim(queue: string, request: ClaimRequest): Promise<ClaimResult> {
    return claim(this.#queue(queue), this.#now(), request);
  }

  async consume(queue: string, request: ConsumeRequest): Promise<boolean> {
    return consume(this.#queue(queue), this.#now(), request);
  }

  async release(queue: string, request: ReleaseRequest): Promise<boolean> {
    return release(this.#queue(queue), this.#now(), request);
  }

  async leave(queue: string, memberId: string): Promise<boolean> {
    return leave(this.#queue(queue), this.#now(), memberId);
  }

  async revoke(queue: string, memberId: string, request: { retainMs: number }): Promise<boolean> {
    const now = this.#now();
    this.#revocations.revoke(queue, memberId, now, request.retainMs);
    return dropToken(this.#queue(queue), now, memberId);
  }

  async revokedAt(queue: string, memberId: string): Promise<number | null> {
    return this.#revocations.revokedAt(queue, memberId);
  }

  async stats(queue: string): Promise<StatsSnapshot> {
    return stats(this.#queue(queue), this.#now());
  }

  async inspect(queue: string, memberId: string): Promise<Omit<MemberInspection, 'memberId'>> {
    return inspect(this.#queue(queue), this.#now(), memberId);
  }

  async touch(queue: string, request: { seen: readonly string[]; pickedUp: readonly string[] }): Promise<number> {
    return touch(this.#queue(queue), this.#now(), request);
  }

  async queueSnapshot(queue: string): Promise<QueueSnapshot> {
    return queueSnapshot(this.#queue(queue), this.#now());
  }

  /** Admission steps of `queue` in this process, pushed to `listener` (always live: nothing is between them). */
  watchHeadMoves(queue: string, listener: HeadMovesListener): HeadMovesWatch {
    const listeners = this.#queue(queue).headMoveListeners;
    listeners.add(listener);
    return { live: () => true, stop: () => void listeners.delete(listener) };
  }

  async setControls(queue: string, request: ControlsRequest): Promise<{ version: number }> {
    return setControls(this.#queue(queue), this.#now(), request);
  }

  async controls(queue: string): Promise<StoredControls> {
    return storedControls(this.#queue(queue), this.#now());
  }

  async controlsLog(queue: string, limit: number): Promise<ControlsLogEntry[]> {
    return controlsLog(this.#queue(queue), limit);
  }

  async addCodes(queue: string, request: AddCodesRequest): Promise<number> {
    return addCodes(this.#queue(queue), request);
  }

  async cohort(queue: string, from: number, count: number): Promise<CohortPage> {
    return cohortPage(this.#queue(queue).cohort, from, count);
  }

  #queue(name: string): QueueState {
    let q = this.#queues.get(name);
    if (!q) this.#queues.set(name, (q = newQueueState()));
    return q;
  }
}
