// The example shop: an Express app with the waiting queue in front of its order endpoint.

import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { queueRoutes, requireEntryToken } from 'waitgate/express';
import { AlreadyOrderedError, OutOfStockError, listProducts, placeOrder } from './db.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// Serve the built package's browser client (dist/client.js and any chunk it imports).
const clientDir = dirname(fileURLToPath(import.meta.resolve('waitgate/client')));

/** The shopper's id from a cookie; a real shop would use its session or auth middleware. */
function shopperOf(req) {
  const match = /(?:^|;\s*)shopper=([A-Za-z0-9_-]{1,64})/.exec(req.headers.cookie ?? '');
  return match?.[1];
}

/**
 * Builds the shop. `queue` is a WaitingQueue; `db` the better-sqlite3 database.
 * Routes: the waiting-room page, /queue/* (waitgate), GET /api/products, POST /api/orders (guarded).
 */
export function createShop({ queue, db }) {
  const app = express();
  app.disable('x-powered-by');

  // Every visitor gets a shopper id (a stand-in for a signed-in user).
  app.use((req, res, next) => {
    if (!shopperOf(req)) {
      const id = randomBytes(9).toString('base64url');
      req.headers.cookie = `${req.headers.cookie ? `${req.headers.cookie}; ` : ''}shopper=${id}`;
      res.cookie('shopper', id, { httpOnly: true, sameSite: 'lax' });
    }
    next();
  });

  app.use('/queue', queueRoutes(queue, { memberId: shopperOf }));

  app.get('/api/products', (_req, res) => {
    res.set('cache-control', 'no-store').json(listProducts(db));
  });

  // Manual settle: consume right after the commit, release after a rollback.
  app.post('/api/orders', express.json({ limit: '1kb' }), requireEntryToken(queue, { memberId: shopperOf, settle: 'manual' }), async (req, res) => {
    const entry = req.entry;
    const productId = Number(req.body?.productId);
    if (!Number.isSafeInteger(productId) || !listProducts(db).some((p) => p.id === productId)) {
      await entry.release();
      return res.status(400).json({ error: { code: 'BAD_PRODUCT', message: 'productId must be a product id' } });
    }
    try {
      const order = placeOrder(db, { memberId: entry.memberId, productId, tokenId: entry.tokenId });
      await entry.consume();
      res.status(201).json({ order });
    } catch (error) {
      if (error instanceof OutOfStockError) {
        await entry.release(); // the shopper keeps the token and may pick another product
        return res.status(409).json({ error: { code: 'OUT_OF_STOCK', message: 'Sold out. Your place is kept: pick another product.' } });
      }
      if (error instanceof AlreadyOrderedError) {
        await entry.consume();
        return res.status(409).json({ error: { code: 'ALREADY_ORDERED', message: 'This entry was already used for an order.' } });
      }
      await entry.release();
      throw error;
    }
  });

  app.get('/api/stats', async (_req, res) => {
    res.set('cache-control', 'no-store').json(await queue.stats());
  });

  // Static files last: a static handler looks on disk (a stat call) for every request
  // that reaches it, and in a flash crowd nearly every request is a poll.
  app.use(express.static(join(here, 'public')));
  app.use('/vendor/waitgate', express.static(clientDir));

  return app;
}
