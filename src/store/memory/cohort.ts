// The auditable cohort of a shuffled pre-queue (mirrors lua/includes/cohort.lua): a
// running SHA-1 chain of the members' salted hashes, O(1) per entry.

import { createHash } from 'node:crypto';
import type { CohortPage } from '../store.js';

/** The chain as kept: its head (40 hex digits) and the salted hashes in entry order. */
export interface Cohort {
  head: string;
  hashes: string[];
}

const EMPTY = '0'.repeat(40);
const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** Folds a member who joined the shuffled pre-queue drawn with `seed` into the chain (made on first use). */
export function foldCohort(cohort: Cohort | undefined, seed: string, memberId: string): Cohort {
  const chain = cohort ?? { head: EMPTY, hashes: [] };
  const hash = sha1(`${seed}:${memberId}`);
  chain.head = sha1(chain.head + hash);
  chain.hashes.push(hash);
  return chain;
}

/** Entries `from` (1-based) onward, at most `count` of them, as lua/cohort-1.lua reads them. */
export function cohortPage(cohort: Cohort | undefined, from: number, count: number): CohortPage {
  if (!cohort) return { head: null, length: 0, hashes: [] };
  return { head: cohort.head, length: cohort.hashes.length, hashes: cohort.hashes.slice(from - 1, from - 1 + count) };
}
