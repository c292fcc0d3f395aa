// The gate before the line (SPEC §17): the queue routes' `gate(req, { memberId, pressure })`,
// asked before `enter` writes anything. `allow` enters as usual; `challenge` answers 401
// CHALLENGE_REQUIRED; `shadow` answers an ordinary-looking WAITING position that never reaches
// the head and costs the store nothing, on the enter and on every later poll (shadow.ts).

import { z } from 'zod';
import { normalizeMemberId } from '../member-id.js';
import { parseStrict } from '../options.js';
import { countShadowed } from '../shadowed.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { NO_STORE, type ErrorBody } from './error-response.js';
import { ArrivalMeter } from './arrival-meter.js';
import { positionResult, type HttpResult } from './result.js';
import { ShadowMarks, shadowPosition, SHADOW_COOKIE } from './shadow.js';
import type { Position } from '../types.js';

/** A gate's verdict on one `POST <prefix>/enter`. */
export type GateVerdict = 'allow' | 'challenge' | 'shadow';

/** What a gate answers: `challenge` (any JSON) travels in the 401 body as `error.challenge`. */
export interface GateDecision {
  verdict: GateVerdict;
  /** With `challenge`: what the client must solve or show (JSON-serialisable), e.g. a proof-of-work puzzle. */
  challenge?: unknown;
}

/** What the gate is told besides the request. */
export interface GateContext {
  /** The member asking to enter (normalised: a number arrives as its decimal string). */
  memberId: string;
  /**
   * Arrivals per second at this instance's enter route (over the last 10 s) divided by the
   * admission rate of the queue's options: above 1, people arrive faster than the line moves.
   */
  pressure: number;
}

/** Decides who may enter: `gate(req, { memberId, pressure })`. May be async. */
export type Gate<Req> = (req: Req, context: GateContext) => GateDecision | Promise<GateDecision>;

/** The 401 body of a challenge: the usual error body, with the gate's challenge beside code and message. */
export interface ChallengeBody extends ErrorBody {
  error: ErrorBody['error'] & { challenge: unknown };
}

const decisionSchema = z.strictObject({ verdict: z.enum(['allow', 'challenge', 'shadow']), challenge: z.unknown().optional() });

/** Route options the gate owns; validated with the other queue-route options (core.ts). */
export const gateOptionShapes = {
  gate: z.custom<Gate<unknown>>((f) => typeof f === 'function', 'must be a function (req, { memberId, pressure }) => { verdict }').optional(),
  shadowSecret: z.string().min(16, 'must be at least 16 characters').optional(),
};

/**
 * One gate as the routes of one queue use it: the arrival meter behind `pressure` and the
 * marks that recognise a shadowed member's later polls.
 */
export class RouteGate {
  readonly #gate: Gate<unknown>;
  readonly #meter = new ArrivalMeter();
  readonly #marks: ShadowMarks;

  constructor(gate: Gate<unknown>, shadowSecret: string | undefined) {
    this.#gate = gate;
    this.#marks = new ShadowMarks(shadowSecret);
  }

  /**
   * The answer of the gate's side of one route, or undefined to run the route as usual: an
   * enter the gate allowed, or a poll or leave of a member that is not shadowed. Writes nothing.
   */
  async run(queue: WaitingQueue, action: 'enter' | 'position' | 'leave', member: unknown, req: unknown): Promise<HttpResult | undefined> {
    const memberId = normalizeMemberId(member); // InvalidMemberIdError: 400, before anything else
    const now = Date.now();
    if (action === 'enter') this.#meter.arrive(now);
    const mark = this.#marks.find(memberId, req, now);
    if (action === 'leave') {
      if (!mark) return undefined;
      this.#marks.forget(memberId);
      return { status: 204, headers: { ...NO_STORE, 'set-cookie': this.#marks.clearCookie() } };
    }
    // A shadowed member stays shadowed (its place keeps moving as it did) until its mark expires.
    if (mark) return positionResult(shadowPosition(queue, this.#marks, mark, now));
    if (action !== 'enter') return undefined;
    const pressure = this.#meter.perSecond(now) / queue.config.admitRatePerSecond;
    const decision = parseStrict(decisionSchema, await this.#gate(req, { memberId, pressure }));
    if (decision.verdict === 'allow') return undefined;
    if (decision.verdict === 'challenge') return challengeResult(decision.challenge);
    countShadowed(queue);
    const created = this.#marks.create(memberId, now);
    const result = positionResult(shadowPosition(queue, this.#marks, created.mark, now));
    result.headers['set-cookie'] = created.cookie;
    return result;
  }

  /**
   * Whether the request is a shadowed member's (a mark in memory or a valid cookie). Writes nothing.
   * An invalid member id is nobody's: false, and the route that follows answers it 400.
   */
  shadowed(member: unknown, req: unknown): boolean {
    let memberId: string;
    try {
      memberId = normalizeMemberId(member);
    } catch {
      return false;
    }
    return this.#marks.find(memberId, req, Date.now()) !== undefined;
  }

  /** A real position the routes answered: what shadow places copy (the line's length, mode, message). */
  observe(position: Position): void {
    this.#marks.observe(position);
  }
}

/** 401 CHALLENGE_REQUIRED with the gate's challenge in the body (the page and the client read it there). */
export function challengeResult(challenge: unknown): HttpResult {
  const body: ChallengeBody = {
    error: { code: 'CHALLENGE_REQUIRED', message: 'Solve the challenge to join the queue, then enter again.', challenge: challenge ?? null },
  };
  return { status: 401, headers: { ...NO_STORE }, body };
}

/** The gate of validated route options, if any. */
export function routeGate(options: { gate?: Gate<unknown>; shadowSecret?: string }): RouteGate | undefined {
  return options.gate ? new RouteGate(options.gate, options.shadowSecret) : undefined;
}

export { SHADOW_COOKIE };
