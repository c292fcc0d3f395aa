// waitgate/express: the queue routes as a Router, and the order-route guard as middleware.

import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { WaitingQueue } from '../waiting-queue.js';
import {
  EVENTS_PATH,
  QUEUE_ROUTES,
  eventsRoute,
  parseGuardOptions,
  parseQueue,
  parseRoutesOptions,
  runGuard,
  runQueueRoute,
  settleWhenFinished,
  type Entry,
  type HttpResult,
  type QueueRoutesOptions,
  type RequireEntryTokenOptions,
} from './core.js';
import { streamToNode } from './node-events.js';
import { parsePassGuard, type EntryPass, type EntryPassSource, type RequireEntryPassOptions } from './entry-pass.js';
import { requestToken } from './pass-cookie.js';
import { ROOM_ROUTES, roomOf } from '../room/routes.js';

export type { EntryPass, EntryPassSource, RequireEntryPassOptions } from './entry-pass.js';
export type { RoomPageOptions, RoomTexts } from './core.js';
export type { Entry, ErrorBody, HttpErrorCode, IdentityResolver, MemberIdResolver, SettleOutcome, SettleState, QueueRoutesOptions, RequireEntryTokenOptions } from './core.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireEntryToken` from waitgate/express: the claimed entry of this order request. */
      entry?: Entry;
      /** Set by `requireEntryPass` from waitgate/express: the member's valid signed pass (not claimed). */
      entryPass?: EntryPass;
    }
  }
}

/** Options of the Express queue routes. */
export type ExpressQueueRoutesOptions = QueueRoutesOptions<Request>;
/** Options of the Express guard. */
export type ExpressRequireEntryTokenOptions = RequireEntryTokenOptions<Request>;

function send(res: Response, result: HttpResult): void {
  res.status(result.status).set(result.headers);
  if (result.body === undefined) res.end();
  else res.json(result.body);
}

/**
 * A Router with `POST /enter`, `GET /position`, `GET /events` (Server-Sent Events) and `DELETE /` (leave), to mount where you like.
 * @example
 * ```ts
 * app.use('/queue', queueRoutes(queue, { memberId: (req) => req.user?.id }));
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function queueRoutes(queue: WaitingQueue, options: ExpressQueueRoutesOptions): Router {
  const q = parseQueue(queue);
  const resolved = parseRoutesOptions(options);
  const { memberId, gate, identity, maxStreams } = resolved;
  const router = express.Router();
  const events = eventsRoute(q, maxStreams, gate);
  router.get(EVENTS_PATH, async (req, res, next) => {
    try {
      const opening = await events(() => memberId(req), req);
      if (opening.kind === 'respond') send(res, opening.result);
      else streamToNode(res, opening.headers, opening.stream);
    } catch (error) {
      next(error);
    }
  });
  for (const route of QUEUE_ROUTES) {
    const method = route.method.toLowerCase() as 'post' | 'get' | 'delete';
    router[method](route.path || '/', async (req, res, next) => {
      try {
        send(res, await runQueueRoute(q, route.action, () => memberId(req), { gate, identity, req }));
      } catch (error) {
        next(error);
      }
    });
  }
  const room = roomOf(q, resolved);
  for (const route of room ? ROOM_ROUTES : []) {
    router[route.method === 'GET' ? 'get' : 'post'](route.path, async (req, res, next) => {
      try {
        const page = await room!.run(route.action, { member: () => memberId(req), req, url: req.originalUrl });
        res.status(page.status).set(page.headers).send(page.body);
      } catch (error) {
        next(error);
      }
    });
  }
  return router;
}

/**
 * Guards an order route: claims the `X-Entry-Token` of the member and exposes it as `req.entry`.
 * Answers 401/409 for a missing, invalid or in-use token and 503 when the store is down
 * (the handler is never reached then, unless `onStoreUnavailable: 'fail-open'`).
 * @example
 * ```ts
 * app.post('/orders', requireEntryToken(queue, { memberId: (req) => req.user?.id }), async (req, res) => {
 *   await db.insertOrder({ ...req.body, tokenId: req.entry!.tokenId }); // UNIQUE(tokenId)
 *   res.status(201).json({ ok: true }); // 2xx: consumed automatically
 * });
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryToken(queue: WaitingQueue, options: ExpressRequireEntryTokenOptions): RequestHandler {
  const q = parseQueue(queue);
  const config = parseGuardOptions(options);
  return async (req, res, next) => {
    try {
      const outcome = await runGuard(q, config, await config.memberId(req), requestToken(req, config.tokenHeader));
      if (outcome.kind === 'respond') return send(res, outcome.result);
      if (outcome.kind === 'entry') {
        req.entry = outcome.entry;
        if (config.settle === 'auto') settleWhenFinished(res, outcome.entry);
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Admits a request carrying the member's valid signed pass, without claiming it (the pages of a
 * multi-step checkout): sets `req.entryPass`. Answers 401 for a missing or invalid pass before
 * any store call; with `checkRevoked`, one store read refuses a revoked pass (503 if the store is down).
 * @example
 * ```ts
 * app.get('/checkout/shipping', requireEntryPass(queue, { memberId: (req) => req.user?.id }), handler);
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryPass(source: EntryPassSource, options: RequireEntryPassOptions<Request>): RequestHandler {
  const guard = parsePassGuard(source, options);
  return async (req, res, next) => {
    try {
      const outcome = await guard.check(await guard.memberId(req), requestToken(req, guard.tokenHeader));
      if (outcome.kind === 'respond') return send(res, outcome.result);
      req.entryPass = outcome.pass;
      next();
    } catch (error) {
      next(error);
    }
  };
}
