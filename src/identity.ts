// One place per identity (SPEC §17): the identity an enter is made under (an account, a
// verified phone), as the store keeps it, and the limit of places it may hold at once.

import { createHash } from 'node:crypto';
import { WaitgateConfigError } from './errors.js';
import type { IdentityRequest } from './store/store.js';

/** The largest `maxPlacesPerIdentity`: it bounds the work of an enter under an identity (lua/includes/identity.lua). */
export const MAX_PLACES_PER_IDENTITY = 100;

const MAX_IDENTITY_LENGTH = 1024;

/**
 * The store's form of an identity: its SHA-256 (base64url), so a phone number or an e-mail
 * never reaches Redis as written, and every identity has the same short length.
 * Undefined or null (no identity) gives undefined.
 * @throws {@link WaitgateConfigError} for anything but a string of 1 to 1,024 characters, undefined or null.
 */
export function identityRequest(identity: unknown, maxPlaces: number): IdentityRequest | undefined {
  if (identity === undefined || identity === null) return undefined;
  if (typeof identity !== 'string' || identity.length < 1 || identity.length > MAX_IDENTITY_LENGTH) {
    throw new WaitgateConfigError('identity', `must be a string of 1 to ${MAX_IDENTITY_LENGTH} characters, or undefined for none`);
  }
  return { key: createHash('sha256').update(identity).digest('base64url'), maxPlaces };
}
