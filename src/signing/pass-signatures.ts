// The signature side of a queue's own passes, on node:crypto: signing and checking a compact
// JWS here costs a third of what Web Crypto through jose costs on Node (measured: ES256 sign
// 33 µs vs 112 µs, verify 62 µs vs 135 µs), and a queue signs once per admission and checks
// once per order. Portable verification (Edge, Deno, Bun) stays jose's: `waitgate/pass`;
// tests check that every pass signed here verifies there.
//
// Signatures are made and checked on libuv's threadpool (node:crypto's callback form), not on the
// event loop, which pays only the hand-off (~12 µs of a 28 µs ES256 signature, measured): the
// loop keeps answering polls while a READY member's pass is signed or an order's pass checked,
// and a server with cores to spare signs on them. Measured in `npm run bench` (passes): the
// signed lifecycle 0.80 of the opaque one with signatures on the loop, 0.89 off it.
//
// Two shortcuts, neither of which weakens the check:
// - A pass this instance signed is recognised by its exact text (the signer keeps the passes
//   it issued lately): equal bytes cannot be a forgery.
// - A pass whose signature failed is remembered (bounded, by its exact text): a flood replaying
//   one forged pass costs a map lookup per request, not a verify. Only verdicts that cannot
//   change are remembered (a bad signature, an unknown key, a malformed pass); time and
//   audience are checked on every request by the caller.

import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { dropOldest } from '../bounded.js';
import type { EntryPassReason } from '../pass/verify.js';
import type { SigningKey } from './keys.js';

/** Refusals remembered, at most; a pass longer than REMEMBERED_LENGTH is checked each time (memory stays below ~4 MB). */
const REMEMBERED_REFUSALS = 4096;
const REMEMBERED_LENGTH = 1024;
/** Passes issued lately, recognised without a verify (a member polls, then orders on the same instance). */
const REMEMBERED_ISSUED = 10_000;
/** Each of these caches forgets its oldest sixteenth at once when full (src/bounded.ts says why). */
const SLACK = 16;

type Refusal = { reason: EntryPassReason };

interface LoadedKey {
  alg: SigningKey['alg'];
  /** The protected header, encoded once: the same for every pass this key signs. */
  header: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

// ES256 signatures are the raw r || s of JWS (RFC 7518 §3.4), not DER.
const signatureOptions = (alg: SigningKey['alg'], key: KeyObject) => (alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key);
const digestOf = (alg: SigningKey['alg']) => (alg === 'ES256' ? 'sha256' : null);
const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
// With a callback, node:crypto runs the operation on the threadpool.
const signOffLoop = promisify(sign);
const verifyOffLoop = promisify(verify);

export class PassSignatures {
  readonly #kid: string;
  readonly #keys = new Map<string, LoadedKey>();
  readonly #refused = new Map<string, Refusal>();
  readonly #issued = new Set<string>();

  constructor(keys: readonly SigningKey[]) {
    this.#kid = keys[0]!.kid;
    for (const { kid, alg, privateJwk } of keys) {
      const privateKey = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
      const header = base64url(JSON.stringify({ alg, kid, typ: 'JWT' }));
      this.#keys.set(kid, { alg, header, privateKey, publicKey: createPublicKey(privateKey) });
    }
  }

  /** A compact JWS of `claims` (in the order given), signed with the first key. */
  async sign(claims: Record<string, unknown>): Promise<string> {
    const { alg, header, privateKey } = this.#keys.get(this.#kid)!;
    const input = `${header}.${base64url(JSON.stringify(claims))}`;
    const signature = await signOffLoop(digestOf(alg), Buffer.from(input), signatureOptions(alg, privateKey));
    const pass = `${input}.${signature.toString('base64url')}`;
    dropOldest(this.#issued, REMEMBERED_ISSUED - 1, REMEMBERED_ISSUED / SLACK);
    this.#issued.add(pass);
    return pass;
  }

  /** The payload of a pass signed by one of the keys, or why not. */
  async verify(pass: string): Promise<Uint8Array | Refusal> {
    if (this.#issued.has(pass)) return Buffer.from(pass.split('.')[1]!, 'base64url');
    const remembered = this.#refused.get(pass);
    if (remembered) return remembered;
    const checked = await this.#check(pass);
    if (!(checked instanceof Uint8Array) && pass.length <= REMEMBERED_LENGTH) {
      dropOldest(this.#refused, REMEMBERED_REFUSALS - 1, REMEMBERED_REFUSALS / SLACK);
      this.#refused.set(pass, checked);
    }
    return checked;
  }

  async #check(pass: string): Promise<Uint8Array | Refusal> {
    const parts = pass.split('.');
    if (parts.length !== 3) return { reason: 'MALFORMED' };
    const [head, body, signature] = parts as [string, string, string];
    let header: { alg?: unknown; kid?: unknown };
    try {
      header = JSON.parse(Buffer.from(head, 'base64url').toString()) as typeof header;
    } catch {
      return { reason: 'MALFORMED' };
    }
    if (typeof header !== 'object' || header === null) return { reason: 'MALFORMED' };
    const key = typeof header.kid === 'string' ? this.#keys.get(header.kid) : undefined;
    if (!key) return { reason: 'UNKNOWN_KEY' };
    if (header.alg !== key.alg) return { reason: 'BAD_SIGNATURE' };
    let signed = false;
    try {
      signed = await verifyOffLoop(
        digestOf(key.alg),
        Buffer.from(`${head}.${body}`),
        signatureOptions(key.alg, key.publicKey),
        Buffer.from(signature, 'base64url'),
      );
    } catch {
      // a signature of the wrong length for the curve: node:crypto throws where jose answers false
    }
    return signed ? Buffer.from(body, 'base64url') : { reason: 'BAD_SIGNATURE' };
  }
}
