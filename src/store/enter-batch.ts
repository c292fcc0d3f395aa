// The arguments of a batch of enters as lua/enterIfAbsent-10.lua takes them (group commit).

import type { EnterOptions } from './store.js';

/**
 * One enter of a batch: member id, not after (Redis ms, '' for none), presence head
 * ('' for none), and for passthrough '|ttl|head|token', else null.
 */
export interface EnterArgs {
  id: string;
  notAfter: number | '';
  head: number | '';
  passthrough: string | null;
  /** The caller's safety net, '|option|rate|burst|maxActive' (lua/includes/safetyNet.lua), or ''. */
  net: string;
  /** '@identity|max|' for a member entering under an identity (one place per identity), else ''. */
  identity: string;
  /** An invite code, or null. */
  code: string | null;
}

/** One enter, its deadline already on Redis's clock (undefined for none). */
export function enterArgs(memberId: string, notAfter: number | undefined, options: EnterOptions): EnterArgs {
  const head = options.presenceHead ?? '';
  const passthrough = options.token !== undefined && options.tokenTtlMs !== undefined ? `|${options.tokenTtlMs}|${head}|${options.token}` : null;
  const n = options.safetyNet;
  const net = n && passthrough !== null ? `|${n.option ? 1 : 0}|${n.ratePerSecond}|${n.burst ?? -1}|${n.maxActive ?? -1}` : '';
  const identity = options.identity ? `@${options.identity.key}|${options.identity.maxPlaces}|` : '';
  return { id: memberId, notAfter: notAfter ?? '', head, passthrough, net, identity, code: options.code ?? null };
}

/**
 * The script's ARGV after the generation: the batch's presence head (the first member's),
 * with the safety net of the first member that sent one (the members of a batch come from one instance), then two values per member: its id, and its deadline, or 'notAfter|ttl|head|token' with
 * a token or a presence head of its own; after '@identity|max|' for a member with an identity,
 * then '#code|' for a member with an invite code.
 */
export function encodeEnters(batch: readonly EnterArgs[]): Array<string | number> {
  const head = batch[0]!.head;
  const args = new Array<string | number>(1 + batch.length * 2);
  args[0] = `${head}${batch.find((e) => e.net !== '')?.net ?? ''}`;
  for (let i = 0, at = 1; i < batch.length; i++) {
    const e = batch[i]!;
    args[at++] = e.id;
    const value = e.passthrough !== null ? `${e.notAfter}${e.passthrough}` : e.head === head ? e.notAfter : `${e.notAfter}||${e.head}|`;
    args[at++] = `${e.identity}${e.code === null ? '' : `#${e.code}|`}${value}`;
  }
  return args;
}
