// waitgate/koa: the queue routes as middleware (no router package needed), and the order-route guard.

import type { DefaultContext, DefaultState, Middleware, ParameterizedContext } from 'koa';
import type { WaitingQueue } from '../waiting-queue.js';
import {
  EVENTS_PATH,
  eventsRoute,
  QUEUE_ROUTES,
  normalizePrefix,
  parseGuardOptions,
  parseQueue,
  parseRoutesOptions,
  runGuard,
  runQueueRoute,
  settleWhenFinished,
  type Entry,
  type HttpResult,
  type MemberIdResolver,
  type QueueRoutesOptions,
  type RequireEntryTokenOptions,
} from './core.js';
import { streamToNode } from './node-events.js';
import { parsePassGuard, type EntryPass, type EntryPassSource, type RequireEntryPassOptions } from './entry-pass.js';
import { requestToken } from './pass-cookie.js';
import { ROOM_ROUTES, roomOf } from '../room/routes.js';

export type { EntryPass, EntryPassSource, RequireEntryPassOptions } from './entry-pass.js';
export type { RoomPageOptions, RoomTexts } from './core.js';
export type { Entry, ErrorBody, HttpErrorCode, IdentityResolver, MemberIdResolver, SettleOutcome, SettleState, RequireEntryTokenOptions } from './core.js';

/** What the guard adds to `ctx.state`. */
export interface EntryState {
  /** The claimed entry of this order request (absent only when the guard let a request through with `onStoreUnavailable: 'fail-open'`). */
  entry?: Entry;
  /** Set by `requireEntryPass`: the member's valid signed pass (not claimed). */
  entryPass?: EntryPass;
}

/** Options of the Koa queue routes. */
export interface KoaQueueRoutesOptions<StateT = DefaultState, ContextT = DefaultContext> extends Pick<
  QueueRoutesOptions<ParameterizedContext<StateT, ContextT>>,
  'gate' | 'identity' | 'shadowSecret' | 'page' | 'maxStreams'
> {
  /** The authenticated member; undefined or null answers 401. */
  memberId: MemberIdResolver<ParameterizedContext<StateT, ContextT>>;
  /** Where the routes live, e.g. `/queue`. Default: the root. */
  prefix?: string;
}

/** Options of the Koa guard. */
export type KoaRequireEntryTokenOptions<StateT = DefaultState, ContextT = DefaultContext> = RequireEntryTokenOptions<ParameterizedContext<StateT, ContextT>>;

function send(ctx: ParameterizedContext, result: HttpResult): void {
  ctx.status = result.status;
  ctx.set(result.headers);
  ctx.body = result.body ?? null;
}

/**
 * Middleware answering `POST <prefix>/enter`, `GET <prefix>/position`, `GET <prefix>/events` (Server-Sent Events) and `DELETE <prefix>` (leave);
 * every other request passes on.
 * @example
 * ```ts
 * app.use(queueRoutes(queue, { memberId: (ctx) => ctx.state.user?.id, prefix: '/queue' }));
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function queueRoutes<StateT = DefaultState, ContextT = DefaultContext>(
  queue: WaitingQueue,
  options: KoaQueueRoutesOptions<StateT, ContextT>,
): Middleware<StateT, ContextT> {
  const q = parseQueue(queue);
  const { prefix, ...rest } = options;
  const resolved = parseRoutesOptions(rest);
  const { memberId, gate, identity, maxStreams } = resolved;
  const base = normalizePrefix(prefix);
  const routes = QUEUE_ROUTES.map((route) => ({ ...route, url: base + route.path || '/' }));
  const room = roomOf(q, resolved);
  const pages = room ? ROOM_ROUTES.map((route) => ({ ...route, url: base + route.path })) : [];
  const events = eventsRoute(q, maxStreams, gate);
  return async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === base + EVENTS_PATH) {
      const opening = await events(() => memberId(ctx), ctx);
      if (opening.kind === 'respond') return send(ctx as ParameterizedContext, opening.result);
      // Koa writes nothing of its own (no buffering, no compression middleware on the body): the stream owns the response.
      ctx.respond = false;
      return streamToNode(ctx.res, opening.headers, opening.stream);
    }
    const route = routes.find((r) => r.method === ctx.method && r.url === ctx.path);
    const pageRoute = route ? undefined : pages.find((r) => r.method === ctx.method && r.url === ctx.path);
    if (pageRoute) {
      const page = await room!.run(pageRoute.action, { member: () => memberId(ctx), req: ctx, url: ctx.url });
      ctx.status = page.status;
      ctx.set(page.headers);
      ctx.body = page.body;
      return;
    }
    if (!route) return next();
    send(ctx as ParameterizedContext, await runQueueRoute(q, route.action, () => memberId(ctx), { gate, identity, req: ctx }));
  };
}

/**
 * Guards an order route: claims the `X-Entry-Token` of the member and exposes it as
 * `ctx.state.entry`. Answers 401/409/503 itself.
 * @example
 * ```ts
 * router.post('/orders', requireEntryToken(queue, { memberId: (ctx) => ctx.state.user?.id }), handler);
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryToken<StateT = DefaultState, ContextT = DefaultContext>(
  queue: WaitingQueue,
  options: KoaRequireEntryTokenOptions<StateT, ContextT>,
): Middleware<StateT & EntryState, ContextT> {
  const q = parseQueue(queue);
  const config = parseGuardOptions(options);
  return async (ctx, next) => {
    const outcome = await runGuard(q, config, await config.memberId(ctx), requestToken(ctx, config.tokenHeader));
    if (outcome.kind === 'respond') return send(ctx as ParameterizedContext, outcome.result);
    if (outcome.kind === 'entry') {
      ctx.state.entry = outcome.entry;
      if (config.settle === 'auto') settleWhenFinished(ctx.res, outcome.entry);
    }
    await next();
  };
}

/**
 * Admits a request carrying the member's valid signed pass, without claiming it (the pages of a
 * multi-step checkout): sets `ctx.state.entryPass`. Answers 401 (and 503 with `checkRevoked` when
 * the store is down) itself.
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryPass<StateT = DefaultState, ContextT = DefaultContext>(
  source: EntryPassSource,
  options: RequireEntryPassOptions<ParameterizedContext<StateT, ContextT>>,
): Middleware<StateT & EntryState, ContextT> {
  const guard = parsePassGuard(source, options);
  return async (ctx, next) => {
    const outcome = await guard.check(await guard.memberId(ctx as ParameterizedContext<StateT, ContextT>), requestToken(ctx, guard.tokenHeader));
    if (outcome.kind === 'respond') return send(ctx as ParameterizedContext, outcome.result);
    ctx.state.entryPass = outcome.pass;
    await next();
  };
}
