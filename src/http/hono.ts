// waitgate/hono: the queue routes as a Hono app to mount with app.route(), and the order-route
// guard as middleware setting a typed c.get('entry'). A thin shell over the Web mapping (web.ts).

import { Hono, type Context, type Env, type MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { BlankEnv } from 'hono/types';
import type { WaitingQueue } from '../waiting-queue.js';
import { EVENTS_PATH, QUEUE_ROUTES, eventsRoute, parseGuardOptions, parseQueue, parseRoutesOptions, runQueueRoute, type QueueRoutesOptions } from './core.js';
import { parsePassGuard, type EntryPass, type EntryPassSource, type RequireEntryPassOptions } from './entry-pass.js';
import { ROOM_ROUTES, roomOf } from '../room/routes.js';
import { guardRequest, toEventResponse, toPageResponse, toResponse, type EntryFor, type StoreUnavailableMode, type WebRequireEntryTokenOptions } from './web.js';
import { requestToken } from './pass-cookie.js';

export type { EntryPass, EntryPassSource, RequireEntryPassOptions } from './entry-pass.js';
export type { RoomPageOptions, RoomTexts } from './core.js';
export type { Entry, ErrorBody, HttpErrorCode, IdentityResolver, MemberIdResolver, SettleOutcome, SettleState } from './core.js';
export type { EntryFor, StoreUnavailableMode, WebRequireEntryTokenOptions } from './web.js';

/** Options of the Hono queue routes: `memberId` receives the Hono `Context` of your app's `Env`. */
export type HonoQueueRoutesOptions<E extends Env = BlankEnv> = QueueRoutesOptions<Context<E>>;

/** Options of the Hono guard; `Mode` is the literal `onStoreUnavailable`, which types the entry. */
export type HonoRequireEntryTokenOptions<E extends Env = BlankEnv, Mode extends StoreUnavailableMode = 'fail-closed'> = WebRequireEntryTokenOptions<
  Context<E>,
  Mode
>;

/** The variables the guard sets: `c.get('entry')` (or `c.var.entry`) after it. */
export interface EntryVariables<Mode extends StoreUnavailableMode = 'fail-closed'> {
  /** The claimed entry of this order request; `Entry | undefined` only with `onStoreUnavailable: 'fail-open'`. */
  entry: EntryFor<Mode>;
}

/**
 * A Hono app answering `POST /enter`, `GET /position` and `DELETE /` (leave): mount it with
 * `app.route('/queue', …)`, after the middleware that authenticates the member.
 * @example
 * ```ts
 * app.route('/queue', queueRoutes(queue, { memberId: (c) => c.get('user')?.id }));
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function queueRoutes<E extends Env = BlankEnv>(queue: WaitingQueue, options: HonoQueueRoutesOptions<E>): Hono<E> {
  const q = parseQueue(queue);
  const resolved = parseRoutesOptions(options);
  const { memberId, gate, identity, maxStreams } = resolved;
  const app = new Hono<E>();
  const events = eventsRoute(q, maxStreams, gate);
  app.get(EVENTS_PATH, async (c) => toEventResponse(await events(() => memberId(c), c), c.req.raw.signal));
  for (const route of QUEUE_ROUTES) {
    app.on(route.method, route.path || '/', async (c) => toResponse(await runQueueRoute(q, route.action, () => memberId(c), { gate, identity, req: c })));
  }
  const room = roomOf(q, resolved);
  for (const route of room ? ROOM_ROUTES : []) {
    app.on(route.method, route.path, async (c) => toPageResponse(await room!.run(route.action, { member: () => memberId(c), req: c, url: c.req.url })));
  }
  return app;
}

/**
 * Middleware guarding an order route: claims the `X-Entry-Token` of the member and sets the
 * entry as `c.get('entry')`, typed `Entry`. Answers 401/409/503 itself, without calling the
 * handler. Settling as in waitgate/fetch: with `settle: 'auto'` a 2xx consumes the claim once
 * the response body was sent; a non-2xx or a thrown handler (even one your `onError` answers)
 * releases it.
 * @example
 * ```ts
 * app.post('/orders', requireEntryToken(queue, { memberId: (c) => c.get('user')?.id }), async (c) => {
 *   const entry = c.get('entry'); // Entry
 *   await db.insertOrder({ memberId: entry.memberId, tokenId: entry.tokenId }); // UNIQUE(tokenId)
 *   return c.json({ ok: true }, 201);
 * });
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryToken<E extends Env = BlankEnv, Mode extends StoreUnavailableMode = 'fail-closed'>(
  queue: WaitingQueue,
  options: HonoRequireEntryTokenOptions<E, Mode>,
): MiddlewareHandler<{ Variables: EntryVariables<Mode> }> {
  const q = parseQueue(queue);
  const config = parseGuardOptions(options);
  return createMiddleware<{ Variables: EntryVariables<Mode> }>(async (c, next) => {
    const member = await config.memberId(c as unknown as Context<E>);
    const response = await guardRequest(
      q,
      config,
      member,
      c.req.raw,
      async (entry) => {
        c.set('entry', entry as EntryFor<Mode>);
        await next();
        return c.res;
      },
      () => c.error !== undefined,
    );
    // The refusal, or the handler's response wrapped to settle once sent (setting c.res keeps the
    // headers other middleware put on the one it replaces).
    if (response !== c.res) c.res = response;
  });
}

/** The variable the pass guard sets: `c.get('entryPass')` (or `c.var.entryPass`) after it. */
export interface EntryPassVariables {
  /** The member's valid signed pass (not claimed). */
  entryPass: EntryPass;
}

/**
 * Middleware admitting a request that carries the member's valid signed pass, without claiming it
 * (the pages of a multi-step checkout): sets `c.var.entryPass`. Answers 401 for a missing or invalid
 * pass before any store call (and 503 with `checkRevoked` when the store is down).
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryPass<E extends Env = BlankEnv>(
  source: EntryPassSource,
  options: RequireEntryPassOptions<Context<E>>,
): MiddlewareHandler<{ Variables: EntryPassVariables }> {
  const guard = parsePassGuard(source, options);
  return createMiddleware<{ Variables: EntryPassVariables }>(async (c, next) => {
    const outcome = await guard.check(await guard.memberId(c as unknown as Context<E>), requestToken(c.req.raw, guard.tokenHeader));
    if (outcome.kind === 'respond') return toResponse(outcome.result);
    c.set('entryPass', outcome.pass);
    await next();
  });
}
