// One place per identity (SPEC §17), mirroring lua/includes/identity.lua: identity key -> the
// members that took places under it. A recorded member counts only while it still holds a
// place (waiting in any lane, or a token not past its deadline).

import { IdentityLimitError } from '../../errors.js';
import type { IdentityRequest } from '../store.js';
import { laneOf } from './lanes.js';
import { deadlineOf, type QueueState } from './state.js';

/** Whether the member waits (in the default line or an invite lane) or holds a token not past its deadline. */
function holdsPlace(q: QueueState, member: string, now: number): boolean {
  const record = q.tokens.get(member);
  return q.waiting.has(member) || laneOf(q, member) !== null || (record !== undefined && deadlineOf(record) > now);
}

/** The members other than `member` recorded under `key` that still hold a place. */
function placesOf(q: QueueState, key: string, member: string, now: number): string[] {
  return (q.identities.get(key) ?? []).filter((holder) => holder !== member && holdsPlace(q, holder, now));
}

/**
 * Records the new place of `member` under its identity, or throws {@link IdentityLimitError}
 * (nothing written) when the identity's other members hold its limit of places. Then looks at
 * the oldest other record and drops it if none of its members holds a place any more.
 */
export function takeIdentityPlace(q: QueueState, identity: IdentityRequest, member: string, now: number): void {
  const live = placesOf(q, identity.key, member, now);
  if (live.length >= identity.maxPlaces) throw new IdentityLimitError();
  q.identities.delete(identity.key); // re-inserted last: the oldest record is the one looked at
  q.identities.set(identity.key, [...live, member]);
  const [oldest] = q.identities.keys();
  if (oldest !== undefined && oldest !== identity.key && placesOf(q, oldest, '', now).length === 0) q.identities.delete(oldest);
}
