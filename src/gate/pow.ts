// powGate: a proof-of-work challenge (ALTCHA's protocol, through `altcha-lib`: find the number n
// with SHA-256(salt + n) = challenge, n ≤ maxnumber), harder as the pressure rises, each solution
// accepted once. The challenge names the member, so one member's solution lets no other in.

import { createHash } from 'node:crypto';
import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import { z } from 'zod';
import type { PowChallenge } from '../client/pow.js';
import { parseStrict } from '../options.js';
import type { Gate, GateDecision } from '../http/gate.js';
import { requestHeader } from '../http/request-header.js';
import { ReplayCache } from './replay-cache.js';

/** The request header a client puts its solution in (for every built-in gate). */
export const CHALLENGE_HEADER = 'x-waitgate-challenge';

export type { PowChallenge };

/** Options of {@link powGate}. */
export interface PowGateOptions {
  /** Signs challenges (HMAC); at least 16 characters, the same on every instance. */
  hmacKey: string;
  /**
   * The work asked (ALTCHA's `maxnumber`): a number is the difficulty at a pressure of 1 or less,
   * multiplied by the pressure above it (at most 20 times). A function maps the pressure to it.
   * Default 50,000 (about half a second in a browser at pressure 1).
   */
  difficulty?: number | ((pressure: number) => number);
  /** Below this pressure everyone is allowed without work. Default 0: always ask. */
  minPressure?: number;
  /** What a wrong, expired, replayed or another member's solution gets. Default `challenge` (a new one). */
  onInvalid?: 'challenge' | 'shadow';
  /** How long a challenge may be solved, seconds. Default 300. */
  expiresInSeconds?: number;
  /** The most accepted solutions remembered (against replay) per instance. Default 100,000. */
  replayCacheSize?: number;
}

const MAX_NUMBER = 100_000_000;

const schema = z.strictObject({
  hmacKey: z.string().min(16, 'must be at least 16 characters'),
  difficulty: z
    .union([z.number().int().min(1).max(MAX_NUMBER), z.custom<(pressure: number) => number>((f) => typeof f === 'function', 'must be a number or a function')])
    .default(50_000),
  minPressure: z.number().min(0).default(0),
  onInvalid: z.enum(['challenge', 'shadow']).default('challenge'),
  expiresInSeconds: z.number().int().min(10).max(86_400).default(300),
  replayCacheSize: z.number().int().min(1).default(100_000),
});

/** A short, non-reversible tag of the member, bound into the challenge's salt. */
function memberTag(memberId: string): string {
  return createHash('sha256').update(`waitgate-pow\n${memberId}`).digest('base64url').slice(0, 16);
}

/**
 * A gate asking for proof of work: without a solution, 401 CHALLENGE_REQUIRED with a
 * {@link PowChallenge}; with a valid, fresh solution for this member in the
 * `X-Waitgate-Challenge` header (ALTCHA's payload: base64 of `{ algorithm, challenge, number,
 * salt, signature }`), allow. A solution is accepted once per instance (see docs/fair-entry.md).
 * @example
 * ```ts
 * app.use('/queue', queueRoutes(queue, { memberId, gate: powGate({ hmacKey: process.env.POW_KEY! }) }));
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function powGate(options: PowGateOptions): Gate<unknown> {
  const config = parseStrict(schema, options);
  const replays = new ReplayCache(config.replayCacheSize);
  const difficulty = (pressure: number): number => {
    const raw = typeof config.difficulty === 'function' ? config.difficulty(pressure) : config.difficulty * Math.min(20, Math.max(1, pressure));
    return Math.min(MAX_NUMBER, Math.max(1, Math.round(Number.isFinite(raw) ? raw : MAX_NUMBER)));
  };
  const challenge = async (memberId: string, pressure: number): Promise<GateDecision> => {
    const issued = await createChallenge({
      hmacKey: config.hmacKey,
      algorithm: 'SHA-256',
      maxnumber: difficulty(pressure),
      expires: new Date(Date.now() + config.expiresInSeconds * 1000),
      params: { member: memberTag(memberId) },
    });
    const body: PowChallenge = { kind: 'pow', ...issued, algorithm: 'SHA-256', maxnumber: issued.maxnumber ?? difficulty(pressure), header: CHALLENGE_HEADER };
    return { verdict: 'challenge', challenge: body };
  };
  return async (req, { memberId, pressure }) => {
    if (pressure < config.minPressure) return { verdict: 'allow' };
    const solution = requestHeader(req, CHALLENGE_HEADER)?.trim();
    if (!solution) return challenge(memberId, pressure);
    if (await accepted(solution, memberId)) return { verdict: 'allow' };
    return config.onInvalid === 'shadow' ? { verdict: 'shadow' } : challenge(memberId, pressure);
  };

  /** A valid, unexpired solution of a challenge issued to this member, not seen before. Never throws for bad input. */
  async function accepted(solution: string, memberId: string): Promise<boolean> {
    let payload: { algorithm?: unknown; signature?: unknown };
    let params: Record<string, string>;
    try {
      payload = JSON.parse(atob(solution)) as typeof payload;
      if (typeof payload !== 'object' || payload === null || payload.algorithm !== 'SHA-256' || typeof payload.signature !== 'string') return false;
      params = extractParams(solution);
      if (params.member !== memberTag(memberId) || !(await verifySolution(solution, config.hmacKey, true))) return false;
    } catch {
      return false;
    }
    return replays.accept(payload.signature as string, Number(params.expires) * 1000, Date.now());
  }
}
