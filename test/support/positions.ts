// A Position to start from in tests that need one without a queue (the waiting page's view, a
// stand-in event stream): a member waiting at the head of an open queue, with what to change.

import type { Position } from '../../src/index.js';

/** A WAITING position (rank 0 of 1, open, no message, no opening, no stock) with `changes` applied. */
export function waitingPosition(changes: Partial<Position> = {}): Position {
  return {
    status: 'WAITING',
    rank: 0,
    currentTotalWaitingCount: 1,
    estimatedWaitSeconds: 1,
    pollingIntervalSeconds: 1,
    entryToken: null,
    entryTokenExpiresAt: null,
    queueMode: 'open',
    message: null,
    opensAt: null,
    stockLeft: null,
    likelyServed: null,
    ...changes,
  };
}
