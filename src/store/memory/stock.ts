// Stock (mirrors lua/includes/stock.lua): each consumed token takes a unit; at 0 the
// queue closes by itself with the sold-out message, which every waiting member reads
// at its next poll.

import { DEFAULT_SOLD_OUT_MESSAGE } from '../../controls.js';
import type { Controls } from './state.js';

/** The controls of a queue whose stock just ran out: closed, the sold-out message shown, the next version. */
export function closeSoldOut(c: Controls): Controls {
  return { ...c, mode: 'closed', message: c.soldOutMessage ?? DEFAULT_SOLD_OUT_MESSAGE, version: c.version + 1 };
}

/** One unit sold (a consume): the stock left falls by one, and the last closes the queue. */
export function sellOne(c: Controls): Controls {
  if (c.stock === undefined || c.stock <= 0) return c;
  // stockAvailable stays: one unit and one token in play fewer.
  const next = { ...c, stock: c.stock - 1 };
  return next.stock === 0 ? closeSoldOut(next) : next;
}
