// The session guard of signed passes (SPEC §15), framework-neutral: `requireEntryPass` of every
// adapter admits a request carrying a valid pass without claiming it (the pages of a multi-step
// checkout); the order route keeps requireEntryToken (claim, consume).

import { z } from 'zod';
import { EntryTokenError, WaitgateConfigError } from '../errors.js';
import { normalizeMemberId } from '../member-id.js';
import { parseStrict } from '../options.js';
import { checkEntryPass, type EntryPassKeys, type VerifyEntryPassOptions } from '../pass/verify.js';
import { QUEUE_CLOCK_TOLERANCE_SECONDS } from '../signing/pass-signer.js';
import { REVOCATION_RETAIN_MS } from '../store-capability.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { toHttpResponse } from './error-response.js';
import { UNAUTHENTICATED, entryTokenOf, type HttpResult, type MemberIdResolver } from './core.js';

/** Where a pass guard takes its keys from: a queue with `signing`, or its public keys and name (no store: no `checkRevoked`). */
export type EntryPassSource = WaitingQueue | { keys: EntryPassKeys | (() => EntryPassKeys | Promise<EntryPassKeys>); queue: string };

/** Options of `requireEntryPass` / `withEntryPass`. */
export interface RequireEntryPassOptions<Req> {
  /** The authenticated member of the request; undefined or null answers 401. */
  memberId: MemberIdResolver<Req>;
  /** Request header carrying the pass. Default `x-entry-token`. */
  tokenHeader?: string;
  /**
   * Also ask the store whether the member's pass was revoked (`queue.revoke`) since it was
   * issued: one store read per request (503 when the store is down). Needs the queue. Default false.
   */
  checkRevoked?: boolean;
  /** How long after its issue a pass admits requests, seconds (at most a day). Default: until the pass expires (the token TTL). */
  sessionSeconds?: number;
}

/** What a pass guard puts on the request (`req.entryPass`, `ctx.state.entryPass`, `c.var.entryPass`). */
export interface EntryPass {
  /** The member, canonical string form. */
  readonly memberId: string;
  /** The pass's token id (`jti`). */
  readonly tokenId: string;
  /** When the pass stops admitting requests (epoch ms): its expiry, or its issue plus `sessionSeconds`. */
  readonly expiresAt: number;
}

/** A validated pass guard. */
export interface PassGuard<Req> {
  memberId: MemberIdResolver<Req>;
  tokenHeader: string;
  check(member: unknown, tokenHeaderValue: string | string[] | null | undefined): Promise<PassOutcome>;
}

export type PassOutcome = { kind: 'pass'; pass: EntryPass } | { kind: 'respond'; result: HttpResult };

const optionsSchema = z.strictObject({
  memberId: z.custom<MemberIdResolver<unknown>>((f) => typeof f === 'function', 'must be a function (req) => member id | undefined'),
  tokenHeader: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name')
    .default('x-entry-token'),
  checkRevoked: z.boolean().default(false),
  sessionSeconds: z
    .number()
    .gt(0)
    .max(REVOCATION_RETAIN_MS / 1000, 'must be at most a day (86400)')
    .optional(),
});

/** Validates pass-guard options alone (NestJS checks them when the decorator is applied). @throws {@link WaitgateConfigError} */
export function parsePassOptions<Req>(options: RequireEntryPassOptions<Req>): z.output<typeof optionsSchema> {
  return parseStrict(optionsSchema, options);
}

const isQueue = (source: unknown): source is WaitingQueue =>
  typeof source === 'object' &&
  source !== null &&
  typeof (source as WaitingQueue).jwks === 'function' &&
  typeof (source as WaitingQueue).revokedAt === 'function';

/**
 * Validates a pass guard's source and options.
 * @throws {@link WaitgateConfigError} for bad options, a queue without `signing`, or `checkRevoked` without a queue.
 */
export function parsePassGuard<Req>(source: EntryPassSource, options: RequireEntryPassOptions<Req>): PassGuard<Req> {
  const parsed = parsePassOptions(options);
  let keys: VerifyEntryPassOptions['keys'];
  let queueName: string;
  if (isQueue(source)) {
    keys = source.jwks();
    if (keys.keys.length === 0) throw new WaitgateConfigError('queue', 'has no signing keys: give the WaitingQueue the `signing` option');
    queueName = source.name;
  } else {
    const given = parseStrict(
      z.strictObject({
        keys: z.custom<VerifyEntryPassOptions['keys']>((k) => typeof k === 'function' || (typeof k === 'object' && k !== null)),
        queue: z.string().min(1),
      }),
      source,
    );
    keys = given.keys;
    queueName = given.queue;
    if (parsed.checkRevoked) throw new WaitgateConfigError('checkRevoked', 'needs the WaitingQueue (its store), not only its keys');
  }
  const queue = isQueue(source) ? source : null;
  return {
    memberId: parsed.memberId as MemberIdResolver<Req>,
    tokenHeader: parsed.tokenHeader.toLowerCase(),
    check: async (member, headerValue) => {
      if (member === undefined || member === null) return { kind: 'respond', result: UNAUTHENTICATED() };
      try {
        const token = entryTokenOf(headerValue);
        if (token === undefined || token === '') throw new EntryTokenError('MISSING');
        const memberId = normalizeMemberId(member as string);
        const options = { keys, queue: queueName, memberId, clockToleranceSeconds: QUEUE_CLOCK_TOLERANCE_SECONDS };
        const claims = await checkEntryPass(token, options, parsed.sessionSeconds);
        if ('reason' in claims) throw new EntryTokenError('INVALID');
        if (parsed.checkRevoked) {
          const revokedAt = await queue!.revokedAt(memberId);
          if (revokedAt !== null && revokedAt >= claims.iat * 1000) throw new EntryTokenError('INVALID');
        }
        const end = parsed.sessionSeconds === undefined ? claims.exp : claims.iat + parsed.sessionSeconds;
        return { kind: 'pass', pass: { memberId, tokenId: claims.jti, expiresAt: end * 1000 } };
      } catch (error) {
        const result = toHttpResponse(error);
        if (!result) throw error;
        return { kind: 'respond', result };
      }
    },
  };
}
