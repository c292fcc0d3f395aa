// Signing keys for the tests of signed entry passes: fresh pairs, as a user makes them.

import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, importPKCS8 } from 'jose';

/** A compact JWS (header.payload.signature, base64url): what a signed entry pass looks like. */
export const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** A fresh private key as a PKCS#8 PEM: ES256 (P-256) or EdDSA (Ed25519). */
export function privateKeyPem(alg: 'ES256' | 'EdDSA' = 'ES256'): string {
  const pair = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  return pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
}

/** A `signing` option with one fresh key. */
export function signingWith(kid = 'k1', alg: 'ES256' | 'EdDSA' = 'ES256'): { keys: { kid: string; privateKey: string }[] } {
  return { keys: [{ kid, privateKey: privateKeyPem(alg) }] };
}

/** A pass signed with `pem` (ES256) carrying exactly `claims` and `header`: forged, expired or other-queue ones. */
export async function signPass(pem: string, claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'ES256', kid: 'k' }): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as never).sign(await importPKCS8(pem, 'ES256'));
}
