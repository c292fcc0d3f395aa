// The draw report (SPEC §17, docs/fair-entry.md): after a shuffled opening, the cohort
// as salted member-id hashes in entry order, with the seed, so anyone can recompute the
// chain head, its length and the draw order without our code.

import type { QueueControls } from './controls.js';
import type { CohortPage, Store } from './store/store.js';

/** What `queue.drawReport()` returns. */
export interface DrawReport {
  /** The draw seed, hex; null until the opening reveals it. */
  seed: string | null;
  /** The published seed commitment (SHA-256 of the seed's bytes), hex; null without a draw. */
  commitment: string | null;
  /** The cohort commitment: the chain head (40 hex digits; null for no member) and its length, frozen at the opening. */
  head: string | null;
  length: number;
  /** SHA-1(`<seed hex>:<member id>`) of each member who joined the pre-queue, in entry order; empty until the opening. */
  hashes: string[];
  /** The same hashes in draw order: by their first 10 hex digits (the draw score), ties by the hash. */
  order: string[];
}

const PAGE = 1000; // lua/cohort-1.lua MAX_PAGE

/** Reads the whole cohort page by page (a bounded call each) once the queue has opened. */
export async function readDrawReport(store: Required<Pick<Store, 'cohort'>>, queue: string, controls: QueueControls): Promise<DrawReport> {
  // Before the opening the hashes would tell each member its draw score: they stay unread (a
  // page of one, the least a call reads, gives the chain's head and length).
  const first: CohortPage = await store.cohort(queue, 1, controls.drawSeed === null ? 1 : PAGE);
  const report = { seed: controls.drawSeed, commitment: controls.drawCommitment, head: first.head, length: first.length };
  if (controls.drawSeed === null) return { ...report, hashes: [], order: [] };
  const hashes = [...first.hashes];
  while (hashes.length < first.length) {
    const page = await store.cohort(queue, hashes.length + 1, PAGE);
    if (page.hashes.length === 0) break;
    hashes.push(...page.hashes);
  }
  // The hex strings' own order is by the first 10 digits (the draw score), then the rest.
  const order = [...hashes].sort();
  return { ...report, hashes, order };
}
