// Member ids: what is accepted, and the one string form every store sees.

import { InvalidMemberIdError } from './errors.js';

/** A member id as callers pass it: a string, or a non-negative safe integer. */
export type MemberId = string | number;

const MAX_LENGTH = 128;
// C0 and C1 control characters, DEL included.
// eslint-disable-next-line no-control-regex -- control characters are what it matches
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// A UTF-16 surrogate that is not half of a pair (with the u flag, pairs are one code point).
// Such a string has no UTF-8 form: Redis would store U+FFFD instead, so two ids would be one member.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Validates a member id and returns its canonical string (a number becomes its
 * decimal string, so `42` and `'42'` are the same member).
 * @throws {@link InvalidMemberIdError} for anything else.
 */
export function normalizeMemberId(memberId: unknown): string {
  if (typeof memberId === 'number') {
    if (!Number.isSafeInteger(memberId) || memberId < 0) {
      throw new InvalidMemberIdError('A numeric member id must be a non-negative safe integer.');
    }
    return String(memberId);
  }
  if (typeof memberId !== 'string') {
    throw new InvalidMemberIdError(`A member id must be a string or a number, not ${describe(memberId)}.`);
  }
  // UTF-16 units >= code points: only a long string needs counting (which allocates).
  const length = memberId.length <= MAX_LENGTH ? memberId.length : [...memberId].length;
  if (length < 1 || length > MAX_LENGTH) {
    throw new InvalidMemberIdError(`A member id must be 1 to ${MAX_LENGTH} characters long (got ${length}).`);
  }
  if (CONTROL.test(memberId)) {
    throw new InvalidMemberIdError('A member id must not contain control characters.');
  }
  if (LONE_SURROGATE.test(memberId)) {
    throw new InvalidMemberIdError('A member id must be well-formed Unicode (no lone surrogate).');
  }
  return memberId;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
}
