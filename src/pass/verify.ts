// Verifying a signed entry pass (SPEC §15) on Web Crypto alone: no `node:` import here or in
// anything this file loads, so it runs in Node, Deno, Bun, Edge middleware and workers.

import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { WaitgateConfigError } from '../errors.js';
import { normalizeMemberId, type MemberId } from '../member-id.js';

/** The issuer of every pass. */
export const PASS_ISSUER = 'waitgate';
/** The algorithms a pass may be signed with. */
export const PASS_ALGORITHMS = ['ES256', 'EdDSA'] as const;

/** A public JSON Web Key of a queue (ES256: `kty` EC, `crv` P-256; EdDSA: `kty` OKP, `crv` Ed25519). */
export interface EntryPassJwk {
  kty: string;
  kid?: string;
  alg?: string;
  crv?: string;
  x?: string;
  y?: string;
  use?: string;
  [parameter: string]: unknown;
}

/** A public JSON Web Key Set, as `queue.jwks()` returns and `<prefix>/.well-known/jwks.json` serves. */
export interface EntryPassKeys {
  keys: EntryPassJwk[];
}

/** Why a pass was refused. */
export type EntryPassReason = 'MALFORMED' | 'BAD_SIGNATURE' | 'UNKNOWN_KEY' | 'EXPIRED' | 'NOT_YET_VALID' | 'WRONG_QUEUE' | 'WRONG_MEMBER';

/** The answer of {@link verifyEntryPass}. */
export type EntryPassResult = { valid: true; memberId: string; tokenId: string; expiresAt: number } | { valid: false; reason: EntryPassReason };

/** Options of {@link verifyEntryPass}. */
export interface VerifyEntryPassOptions {
  /** The queue's public keys: a JWKS object (`queue.jwks()`), or a function returning one (e.g. fetched and cached). */
  keys: EntryPassKeys | (() => EntryPassKeys | Promise<EntryPassKeys>);
  /** The queue name the pass must be for (its `aud`). */
  queue: string;
  /** When given, the member the pass must belong to (its `sub`). */
  memberId?: MemberId;
  /** The time to check against, epoch ms or a Date. Default: now. */
  now?: number | Date;
  /** Leeway for `nbf` and `exp` between clocks, seconds. Default 0. */
  clockToleranceSeconds?: number;
}

/** The claims of a pass whose signature and shape were checked. @internal */
export interface PassClaims {
  sub: string;
  jti: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
}

const keySets = new WeakMap<object, ReturnType<typeof createLocalJWKSet>>();

/**
 * Verifies a signed entry pass: its signature against `keys`, that it is for `queue` (and
 * `memberId` when given) and that it is valid at `now`. Makes no store call: a pass the
 * store has consumed or revoked still verifies (the order route's claim, or a guard's
 * `checkRevoked`, asks the store).
 * @returns `{ valid: true, memberId, tokenId, expiresAt }` (`tokenId`: the pass's `jti`;
 *   `expiresAt`: epoch ms), or `{ valid: false, reason }`.
 * @throws {@link index!WaitgateConfigError} for bad options; {@link index!InvalidMemberIdError} for a bad `memberId`.
 */
export async function verifyEntryPass(pass: unknown, options: VerifyEntryPassOptions): Promise<EntryPassResult> {
  const checked = await checkEntryPass(pass, options);
  if ('reason' in checked) return { valid: false, reason: checked.reason };
  return { valid: true, memberId: checked.sub, tokenId: checked.jti, expiresAt: checked.exp * 1000 };
}

/**
 * {@link verifyEntryPass}, returning the claims. With `sessionSeconds`, the pass is valid
 * until `iat + sessionSeconds` instead of `exp` (a session across several requests). @internal
 */
export async function checkEntryPass(
  pass: unknown,
  options: VerifyEntryPassOptions,
  sessionSeconds?: number,
  signature: SignatureCheck = joseSignature,
): Promise<PassClaims | { reason: EntryPassReason }> {
  const { queue, now, tolerance } = parseVerifyOptions(options);
  const member = options.memberId === undefined ? undefined : normalizeMemberId(options.memberId);
  if (typeof pass !== 'string' || pass.length > 4096 || pass.split('.').length !== 3) return { reason: 'MALFORMED' };
  const payload = await signature(pass, options.keys);
  if (!(payload instanceof Uint8Array)) return payload;
  const claims = claimsOf(payload);
  if (!claims) return { reason: 'MALFORMED' };
  if (claims.aud !== queue) return { reason: 'WRONG_QUEUE' };
  if (member !== undefined && claims.sub !== member) return { reason: 'WRONG_MEMBER' };
  const seconds = now / 1000;
  if (claims.nbf > seconds + tolerance) return { reason: 'NOT_YET_VALID' };
  const end = sessionSeconds === undefined ? claims.exp : claims.iat + sessionSeconds;
  if (end <= seconds - tolerance) return { reason: 'EXPIRED' };
  return claims;
}

/**
 * Checks a pass's signature against the keys: its payload, or why not. The queue's own checks
 * use node:crypto (src/signing/pass-signatures.ts); everywhere else, jose on Web Crypto. @internal
 */
export type SignatureCheck = (
  pass: string,
  keys: VerifyEntryPassOptions['keys'],
) => Promise<Uint8Array | { reason: EntryPassReason }> | Uint8Array | { reason: EntryPassReason };

async function joseSignature(pass: string, keys: VerifyEntryPassOptions['keys']): Promise<Uint8Array | { reason: EntryPassReason }> {
  const jwks = typeof keys === 'function' ? await keys() : keys;
  try {
    return (await compactVerify(pass, keySetOf(jwks), { algorithms: [...PASS_ALGORITHMS] })).payload;
  } catch (error) {
    return { reason: reasonOf(error) };
  }
}

function parseVerifyOptions(options: VerifyEntryPassOptions): { queue: string; now: number; tolerance: number } {
  if (typeof options !== 'object' || options === null) throw new WaitgateConfigError('options', 'must be an object');
  const { keys, queue, now, clockToleranceSeconds } = options;
  if (typeof keys !== 'function' && (typeof keys !== 'object' || keys === null || !Array.isArray(keys.keys))) {
    throw new WaitgateConfigError('keys', 'must be a JSON Web Key Set ({ keys: [...] }) or a function returning one');
  }
  if (typeof queue !== 'string' || queue === '') throw new WaitgateConfigError('queue', 'must be the queue name');
  const at = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (typeof at !== 'number' || !Number.isFinite(at)) throw new WaitgateConfigError('now', 'must be epoch milliseconds or a Date');
  const tolerance = clockToleranceSeconds ?? 0;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new WaitgateConfigError('clockToleranceSeconds', 'must be a non-negative number');
  }
  return { queue, now: at, tolerance };
}

function keySetOf(jwks: EntryPassKeys): ReturnType<typeof createLocalJWKSet> {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) {
    throw new WaitgateConfigError('keys', 'must return a JSON Web Key Set ({ keys: [...] })');
  }
  let set = keySets.get(jwks);
  if (!set) {
    set = createLocalJWKSet(jwks as JSONWebKeySet);
    keySets.set(jwks, set);
  }
  return set;
}

/** jose's errors (by their stable codes) as our reasons. */
function reasonOf(error: unknown): EntryPassReason {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'UNKNOWN_KEY';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'BAD_SIGNATURE';
    default:
      return 'MALFORMED';
  }
}

const TOKEN_ID = /^[A-Za-z0-9_-]{43}$/;
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function claimsOf(payload: Uint8Array): PassClaims | null {
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null || claims.iss !== PASS_ISSUER) return null;
  const { sub, jti, aud, iat, nbf, exp } = claims;
  if (typeof sub !== 'string' || typeof aud !== 'string' || typeof jti !== 'string' || !TOKEN_ID.test(jti)) return null;
  if (!isTime(iat) || !isTime(nbf) || !isTime(exp)) return null;
  return { sub, jti, aud, iat, nbf, exp };
}
