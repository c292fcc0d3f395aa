// The key schema: a fixed, small set of keys per queue, all under one hash tag.

/** Every key of one queue. No key is per member, so a queue's size is measurable and it can be deleted whole. */
export interface QueueKeys {
  /** zset member -> entry sequence (FIFO order). */
  waiting: string;
  /** hash member -> token record. */
  tokens: string;
  /** zset member -> token deadline (ms): who holds a live token. */
  active: string;
  /** zset member -> claim lease expiry (ms). */
  leases: string;
  /** zset claim id -> forget-after (ms): consumed claims, for idempotent consume. */
  consumed: string;
  /** hash: generation, entry sequence, token bucket, admission window. */
  meta: string;
  /** zset admit id -> forget-after (ms): recent admit calls, so a re-sent one admits nothing. */
  admits: string;
  /** hash member -> last sign of life (ms), only for members near the head (abandonAfterSeconds). */
  seen: string;
  /** zset entry score -> time (ms): entry checkpoints, at most one a second, for the wait figures of stats(). */
  entries: string;
  /** zset member -> revoked at (ms): signed passes ended by WaitingQueue.revoke, kept a while. */
  revoked: string;
  /** list: the audit trail of the controls, newest first, capped (lua/includes/controlsLog.lua). */
  log: string;
  /** hash identity key -> the members holding its places (one place per identity, lua/includes/identity.lua). */
  identities: string;
  /** zset member -> laneIndex * 2^40 + entry sequence: the members who entered with an invite code (lua/includes/lanes.lua). */
  lanes: string;
  /** hash code -> "<lane>|<uses left>": invite codes (queue.addCodes). */
  codes: string;
}

/** The hash tag shared by a queue's keys: `{<prefix>:<name>}`. In Redis Cluster they all live in its slot. */
export function hashTag(prefix: string, name: string): string {
  return `{${prefix}:${name}}`;
}

export function queueKeys(prefix: string, name: string): QueueKeys {
  const tag = hashTag(prefix, name);
  return {
    waiting: `${tag}:waiting`,
    tokens: `${tag}:tokens`,
    active: `${tag}:active`,
    leases: `${tag}:leases`,
    consumed: `${tag}:consumed`,
    meta: `${tag}:meta`,
    admits: `${tag}:admits`,
    seen: `${tag}:seen`,
    entries: `${tag}:entries`,
    revoked: `${tag}:revoked`,
    log: `${tag}:log`,
    identities: `${tag}:identities`,
    lanes: `${tag}:lanes`,
    codes: `${tag}:codes`,
  };
}
