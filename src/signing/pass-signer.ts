// A queue's signed passes (SPEC §15): the READY token the store keeps is the pass's `jti`;
// members get it wrapped in a compact JWS, and a pass is checked here before any store call.

import { dropOldest } from '../bounded.js';
import { EntryTokenError } from '../errors.js';
import { PASS_ISSUER, checkEntryPass, type EntryPassKeys, type EntryPassReason, type PassClaims } from '../pass/verify.js';

export type { EntryPassKeys };
import type { PublicJwk, SigningKey } from './keys.js';
import { PassSignatures } from './pass-signatures.js';
import type { Admission, Position } from '../types.js';
import { hasTokenShape } from '../tokens.js';

/** Leeway between this instance's clock and the store's (Redis TIME dates a pass) when the queue checks a pass. */
export const QUEUE_CLOCK_TOLERANCE_SECONDS = 5;
/** Passes signed lately, so a member polling while READY is not signed anew each time. */
const CACHE_SIZE = 10_000;
/** Forgotten at once when the cache is full: its oldest sixteenth (src/bounded.ts says why). */
const CACHE_SLACK = CACHE_SIZE / 16;

export class PassSigner {
  readonly #queue: string;
  readonly #ttlMs: number;
  readonly #signatures: PassSignatures;
  readonly #jwks: { keys: PublicJwk[] };
  readonly #signed = new Map<string, Promise<string>>();

  constructor(keys: readonly SigningKey[], queue: string, tokenTtlMs: number) {
    this.#signatures = new PassSignatures(keys);
    this.#queue = queue;
    this.#ttlMs = tokenTtlMs;
    this.#jwks = Object.freeze({ keys: keys.map((k) => Object.freeze({ ...k.publicJwk })) }) as { keys: PublicJwk[] };
  }

  /** The public JSON Web Key Set: every key listed verifies. */
  jwks(): EntryPassKeys {
    return this.#jwks as unknown as EntryPassKeys;
  }

  /**
   * The pass of a token (`jti`, what the store keeps). Issued at the token's admission (its
   * expiry less the TTL, so every instance dates it alike), valid until its expiry.
   */
  sign(memberId: string, jti: string, expiresAt: number): Promise<string> {
    const cached = this.#signed.get(jti);
    if (cached !== undefined) return cached;
    const issuedAt = Math.floor((expiresAt - this.#ttlMs) / 1000);
    const claims = { iss: PASS_ISSUER, aud: this.#queue, sub: memberId, jti, iat: issuedAt, nbf: issuedAt, exp: Math.floor(expiresAt / 1000) };
    // The promise is kept: a poll that reads the pass while it is being signed waits for that signature.
    const pass = this.#signatures.sign(claims);
    dropOldest(this.#signed, CACHE_SIZE - 1, CACHE_SLACK);
    this.#signed.set(jti, pass);
    pass.catch(() => {
      if (this.#signed.get(jti) === pass) this.#signed.delete(jti); // the next read signs again
    });
    return pass;
  }

  /** The claims of a member's pass, or why it is refused; no store call. */
  check(memberId: string, pass: string, sessionSeconds?: number): Promise<PassClaims | { reason: EntryPassReason }> {
    return checkEntryPass(
      pass,
      { keys: this.#jwks as unknown as EntryPassKeys, queue: this.#queue, memberId, clockToleranceSeconds: QUEUE_CLOCK_TOLERANCE_SECONDS },
      sessionSeconds,
      (checked) => this.#signatures.verify(checked),
    );
  }

  /**
   * The token id (`jti`) of a member's pass, for the store to claim.
   * @throws {@link EntryTokenError} `INVALID` for a pass that does not verify: forged,
   *   expired, for another queue or another member. No store call is made for it.
   */
  async open(memberId: string, pass: string): Promise<string> {
    const claims = await this.check(memberId, pass);
    if ('reason' in claims) throw new EntryTokenError('INVALID');
    return claims.jti;
  }
}

/** With `signing`, a READY position carries the member's signed pass instead of the bare token. */
export async function signedPosition(signer: PassSigner | null, position: Position, memberId: string): Promise<Position> {
  if (!signer || position.entryToken === null || position.entryTokenExpiresAt === null) return position;
  return { ...position, entryToken: await signer.sign(memberId, position.entryToken, position.entryTokenExpiresAt) };
}

/** With `signing`, each admission carries its member's signed pass instead of the bare token. */
export function signedAdmissions(signer: PassSigner | null, admitted: readonly Admission[]): Promise<Admission[]> {
  return Promise.all(
    admitted.map(async ({ memberId, entryToken, expiresAt }) => ({
      memberId,
      entryToken: signer ? await signer.sign(memberId, entryToken, expiresAt) : entryToken,
      expiresAt,
    })),
  );
}

/**
 * What the store is asked to claim for a token a member presented: the token itself, or with
 * `signing` the `jti` of a pass that verifies. The store only ever sees a token id.
 * @throws {@link EntryTokenError} `MISSING` (empty) or `INVALID` (not of our shape, or a pass
 *   that does not verify), before any store call.
 */
export async function storeTokenOf(signer: PassSigner | null, memberId: string, token: unknown): Promise<string> {
  if (token === undefined || token === null || token === '') throw new EntryTokenError('MISSING');
  if (typeof token !== 'string') throw new EntryTokenError('INVALID');
  const inStore = signer ? await signer.open(memberId, token) : token;
  if (!hasTokenShape(inStore)) throw new EntryTokenError('INVALID');
  return inStore;
}
