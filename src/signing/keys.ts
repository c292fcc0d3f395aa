// The `signing` option: private keys checked at construction (synchronously, so a bad key
// throws WaitgateConfigError from the constructor) and their public JWKS.

import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { WaitgateConfigError } from '../errors.js';

/** One signing key: an id (the JWS `kid`) and a PKCS#8 PEM or a private JWK, ES256 (P-256) or EdDSA (Ed25519). */
export interface SigningKeyOption {
  kid: string;
  privateKey: string | Record<string, unknown>;
}

/** The `signing` option of {@link index!WaitingQueueOptions}. */
export interface SigningOptions {
  /** The first key signs; every key listed verifies (rotation: add the new key first, remove the old one after the longest token TTL). */
  keys: readonly SigningKeyOption[];
}

/** A public JSON Web Key of a signing key. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: 'ES256' | 'EdDSA';
  use: 'sig';
}

/** A checked signing key. */
export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'EdDSA';
  /** The private JWK, for jose's importJWK. */
  privateJwk: Record<string, unknown>;
  publicJwk: PublicJwk;
}

export const signingSchema = z.strictObject({
  keys: z
    .array(
      z.strictObject({
        kid: z.string().regex(/^[\x21-\x7e]{1,128}$/, 'must be 1-128 printable ASCII characters'),
        privateKey: z.union([z.string().min(1), z.record(z.string(), z.unknown())], { error: 'must be a PKCS#8 PEM string or a private JWK' }),
      }),
    )
    .min(1, 'must list at least one key'),
});

const KEY_MESSAGE = 'must be a PKCS#8 PEM or a private JWK of an ES256 (P-256) or EdDSA (Ed25519) key';

/**
 * Loads and checks the keys of the `signing` option.
 * @throws {@link WaitgateConfigError} naming the bad key (`signing.keys.1.privateKey`) or a repeated kid.
 */
export function loadSigningKeys(option: z.output<typeof signingSchema>): SigningKey[] {
  const seen = new Set<string>();
  return option.keys.map(({ kid, privateKey }, i) => {
    if (seen.has(kid)) throw new WaitgateConfigError(`signing.keys.${i}.kid`, `repeats "${kid}"; every key needs its own kid`);
    seen.add(kid);
    let key: KeyObject;
    try {
      key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : createPrivateKey({ key: privateKey as never, format: 'jwk' });
    } catch {
      throw new WaitgateConfigError(`signing.keys.${i}.privateKey`, KEY_MESSAGE);
    }
    const alg =
      key.type !== 'private'
        ? null
        : key.asymmetricKeyType === 'ed25519'
          ? 'EdDSA'
          : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
            ? 'ES256'
            : null;
    if (!alg) throw new WaitgateConfigError(`signing.keys.${i}.privateKey`, KEY_MESSAGE);
    const { kty, crv, x, y } = createPublicKey(key).export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y?: string };
    const publicJwk: PublicJwk = { kty, crv, x, ...(y === undefined ? {} : { y }), kid, alg, use: 'sig' };
    return { kid, alg, privateJwk: key.export({ format: 'jwk' }) as Record<string, unknown>, publicJwk };
  });
}
