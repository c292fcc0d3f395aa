// The options of WaitingQueue.enter: what one enter brings besides the member id.

import { z } from 'zod';
import { identityRequest } from './identity.js';
import { enterCode } from './invite-codes.js';
import { parseStrict } from './options.js';
import type { EnterOptions } from './store/store.js';

/** Options of {@link WaitingQueue.enter}. */
export interface QueueEnterOptions {
  /**
   * The identity the member enters under (an account, a verified phone: a string of 1 to
   * 1,024 characters; undefined for none). A new member is refused with `IdentityLimitError`
   * (HTTP 409 IDENTITY_LIMIT), nothing written, while other members of the same identity hold
   * `maxPlacesPerIdentity` places, on any instance (the store counts them). It reaches the store
   * as its SHA-256 only.
   */
  identity?: string;
  /**
   * An invite code (see `queue.addCodes`): a new member joins the code's lane and spends one use
   * in the same atomic step; an unknown or spent code throws `CodeInvalidError` (HTTP 403
   * CODE_INVALID), nothing written. A member already placed keeps its place and spends nothing.
   */
  code?: string | null;
}

const enterOptionsSchema = z.strictObject({ identity: z.unknown().optional(), code: z.unknown().optional() });

/**
 * The store's part of an enter's options, checked.
 * @throws {@link WaitgateConfigError} for an unknown option or a bad identity; CodeInvalidError for a code that cannot be one.
 */
export function parseEnterOptions(options: unknown, maxPlacesPerIdentity: number): Pick<EnterOptions, 'identity' | 'code'> {
  const { identity, code } = parseStrict(enterOptionsSchema, options ?? {});
  const checkedCode = enterCode({ code: code as string | null | undefined });
  return { identity: identityRequest(identity, maxPlacesPerIdentity), ...(checkedCode === undefined ? {} : { code: checkedCode }) };
}
