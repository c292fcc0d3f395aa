// The example shop: an Express app with the waiting queue in front of its order endpoint.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { isWaitgateError, toHttpResponse } from 'waitgate';
import { queueRoutes, requireEntryToken } from 'waitgate/express';
import { AlreadyOrderedError, OutOfStockError, listProducts, placeOrder } from './db.mjs';
import { opsDashboard } from './ops-dashboard.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// Serve the built package's browser client (dist/client.js and any chunk it imports).
const clientDir = dirname(fileURLToPath(import.meta.resolve('waitgate/client')));

/** The shopper's id from a cookie; a real shop would use its session or auth middleware. */
function shopperOf(req) {
  const match = /(?:^|;\s*)shopper=([A-Za-z0-9_-]{1,64})/.exec(req.headers.cookie ?? '');
  return match?.[1];
}

const sha256 = (text) => createHash('sha256').update(text).digest();

/** The waiting room's look and words for the shop (docs/waiting-room.md). */
const ROOM = {
  continueUrl: '/shop.html',
  logoUrl: '/logo.svg',
  theme: { '--waitgate-accent': '#b4235a', '--waitgate-bg': '#f6f1ec', '--waitgate-font': "Georgia, 'Times New Roman', serif" },
  texts: {
    en: {
      title: 'Sneaker drop — waiting room',
      heading: 'Sneaker drop: you are in the queue',
      refusedTitle: 'This drop is closed',
      oddsLikely: '{stock} pairs left: enough for everyone ahead of you, and you.',
      oddsUnlikely: '{stock} pairs left: they will likely be gone before your turn. You keep your place in case some come back.',
    },
  },
};
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * The operator's guard: the request must carry `Authorization: Bearer <adminToken>`.
 * Without an admin token configured, every request is refused (403).
 */
function requireAdmin(adminToken) {
  const expected = adminToken === undefined ? null : sha256(adminToken);
  return (req, res, next) => {
    const given = /^Bearer +(\S+) *$/i.exec(req.get('authorization') ?? '')?.[1];
    // Hashes of equal length, compared in constant time: the token's length leaks nothing either.
    if (expected !== null && given !== undefined && timingSafeEqual(sha256(given), expected)) return next();
    res
      .status(403)
      .set(NO_STORE)
      .json({
        error: {
          code: 'FORBIDDEN',
          message: expected === null ? 'The operator routes are off: start the shop with ADMIN_TOKEN set.' : 'Send Authorization: Bearer <ADMIN_TOKEN>.',
        },
      });
  };
}

/** Answers a failed setControls / controls call: 400 for a bad patch, else waitgate's own answer. */
function sendControlsError(res, error) {
  // A bad patch is the operator's input: 400 with what is wrong. The one config error that is
  // not about the patch (a store without runtime controls) stays the server's fault (500).
  if (isWaitgateError(error) && error.code === 'CONFIG_INVALID' && error.option !== 'store') {
    return res
      .status(400)
      .set(NO_STORE)
      .json({ error: { code: 'CONFIG_INVALID', message: error.message } });
  }
  const answer = toHttpResponse(error);
  if (!answer) throw error;
  res.status(answer.status).set(answer.headers).json(answer.body);
}

/**
 * Builds the shop. `queue` is a WaitingQueue; `db` the libsql (better-sqlite3-compatible) database;
 * `adminToken` (optional, 16+ characters) turns the operator routes on.
 * Routes: / (to the waiting room), /queue/* (waitgate, with the waiting room at /queue/room), /shop.html, GET /api/products, POST /api/orders
 * (guarded), GET/POST /admin/controls (operator, bearer token), and GET /metrics when
 * `metrics` (a Prometheus scrape handler, see metrics.mjs) is given, and the operator
 * dashboard at /ops/waitgate/ (HTTP Basic, user `ops`) when `opsPassword` is given.
 * `gate` (e.g. `powGate` of waitgate/gate; off by default) and `identity` (the account a
 * request enters under) go to the queue routes as their options of the same names (docs/fair-entry.md).
 * @param {{ queue: import('waitgate').WaitingQueue, db: import('libsql').Database, adminToken?: string, metrics?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void, opsPassword?: string, gate?: import('waitgate/gate').Gate<import('express').Request>, identity?: (req: import('express').Request) => string | undefined }} options
 */
export function createShop({ queue, db, adminToken, metrics, opsPassword, gate, identity }) {
  if (adminToken !== undefined && (typeof adminToken !== 'string' || adminToken.length < 16 || /\s/.test(adminToken))) {
    throw new TypeError('adminToken must be a string of at least 16 characters without spaces (e.g. openssl rand -hex 16)');
  }
  const app = express();
  app.disable('x-powered-by');

  // Operator routes: read the controls, or change them while the sale runs (pause with a
  // message, schedule an opening, close when sold out...); the body is a setControls patch.
  // Mounted before the shopper cookie: an operator is no shopper.
  const admin = express.Router();
  admin.use(requireAdmin(adminToken));
  admin.get('/controls', async (_req, res) => {
    try {
      res.set(NO_STORE).json(await queue.controls());
    } catch (error) {
      sendControlsError(res, error);
    }
  });
  admin.post('/controls', express.json({ limit: '4kb' }), async (req, res) => {
    if (!req.is('application/json')) {
      return res
        .status(415)
        .set(NO_STORE)
        .json({ error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the patch as JSON (Content-Type: application/json).' } });
    }
    try {
      res.set(NO_STORE).json(await queue.setControls(req.body));
    } catch (error) {
      sendControlsError(res, error);
    }
  });
  // A body that is not JSON, too large, or in an unknown charset: the parser's 4xx, as JSON.
  admin.use((error, _req, res, next) => {
    const status = Number(error?.status);
    if (!(status >= 400 && status < 500)) return next(error);
    res
      .status(status)
      .set(NO_STORE)
      .json({ error: { code: 'BAD_REQUEST', message: error.expose ? error.message : 'The request body could not be read.' } });
  });
  app.use('/admin', admin);

  // Prometheus scrapes (waitgate/opentelemetry through the Prometheus exporter); before the
  // shopper cookie too. Expose it only to your monitoring network in a real shop.
  if (metrics) app.get('/metrics', (req, res) => metrics(req, res));

  // The operator dashboard (waitgate/dashboard), behind HTTP Basic auth; before the shopper cookie.
  if (opsPassword) app.use('/ops/waitgate', opsDashboard(queue, { password: opsPassword }));

  // Every visitor gets a shopper id (a stand-in for a signed-in user).
  app.use((req, res, next) => {
    if (!shopperOf(req)) {
      const id = randomBytes(9).toString('base64url');
      req.headers.cookie = `${req.headers.cookie ? `${req.headers.cookie}; ` : ''}shopper=${id}`;
      res.cookie('shopper', id, { httpOnly: true, sameSite: 'lax' });
    }
    next();
  });

  // The queue routes with waitgate's waiting room at /queue/room, themed for the shop: its
  // colours, its own words in English (every other locale keeps waitgate's). When the shopper's
  // turn comes, the room sets the waitgate_pass cookie and sends them on to /shop.html.
  app.use('/queue', queueRoutes(queue, { memberId: shopperOf, page: ROOM, ...(gate ? { gate } : {}), ...(identity ? { identity } : {}) }));
  app.get('/', (_req, res) => res.redirect(303, '/queue/room'));

  app.get('/api/products', (_req, res) => {
    res.set('cache-control', 'no-store').json(listProducts(db));
  });

  // Manual settle: consume right after the commit, release after a rollback.
  app.post('/api/orders', express.json({ limit: '1kb' }), requireEntryToken(queue, { memberId: shopperOf, settle: 'manual' }), async (req, res) => {
    const entry = req.entry;
    const productId = Number(req.body?.productId);
    if (!Number.isSafeInteger(productId) || !listProducts(db).some((p) => p.id === productId)) {
      await entry.release({ failed: false }); // the shopper's mistake, not a failed order
      return res.status(400).json({ error: { code: 'BAD_PRODUCT', message: 'productId must be a product id' } });
    }
    try {
      const order = placeOrder(db, { memberId: entry.memberId, productId, tokenId: entry.tokenId });
      await entry.consume();
      res.status(201).json({ order });
    } catch (error) {
      if (error instanceof OutOfStockError) {
        await entry.release({ failed: false }); // the shopper keeps the token and may pick another product; not a failed order
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
