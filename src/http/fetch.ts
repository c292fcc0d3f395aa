// waitgate/fetch: the queue routes and the order-route guard on Web-standard Request/Response,
// for Next.js route handlers, Remix, SvelteKit, Bun, Deno and other fetch-style runtimes.

import type { WaitingQueue } from '../waiting-queue.js';
import { EVENTS_PATH, QUEUE_ROUTES, eventsRoute, normalizePrefix, parseGuardOptions, parseQueue, parseRoutesOptions, runQueueRoute, type QueueRoutesOptions } from './core.js';
import { parsePassGuard, type EntryPass, type EntryPassSource, type RequireEntryPassOptions } from './entry-pass.js';
import { ROOM_ROUTES, roomOf } from '../room/routes.js';
import { guardRequest, toEventResponse, toPageResponse, toResponse, type EntryFor, type StoreUnavailableMode, type WebRequireEntryTokenOptions } from './web.js';
import { requestToken } from './pass-cookie.js';

export type { EntryPass, EntryPassSource, RequireEntryPassOptions } from './entry-pass.js';
export type { RoomPageOptions, RoomTexts } from './core.js';
export type { Entry, ErrorBody, HttpErrorCode, IdentityResolver, MemberIdResolver, SettleOutcome, SettleState } from './core.js';
export type { EntryFor, StoreUnavailableMode, WebRequireEntryTokenOptions } from './web.js';

/** Options of the fetch queue routes. */
export interface FetchQueueRoutesOptions<Req extends Request = Request> extends QueueRoutesOptions<Req> {
  /** The path the routes live under, e.g. `/api/queue`; matched against the URL's path. Default: the root. */
  prefix?: string;
}

/** Options of the fetch guard; `Mode` is the literal `onStoreUnavailable`, which types the entry. */
export type FetchRequireEntryTokenOptions<Req extends Request = Request, Mode extends StoreUnavailableMode = 'fail-closed'> = WebRequireEntryTokenOptions<
  Req,
  Mode
>;

/**
 * The queue routes as one fetch handler: `POST <prefix>/enter`, `GET <prefix>/position`, `GET <prefix>/events` (SSE) and
 * `DELETE <prefix>` (leave), matched on the method and the URL's path. It resolves `undefined`
 * for any other request, so you can chain it or answer 404 yourself.
 * @example
 * ```ts
 * // app/api/queue/[[...path]]/route.ts (Next.js)
 * const routes = queueRoutes(queue, { memberId: (req) => currentUser(req)?.id, prefix: '/api/queue' });
 * const handle = async (req: Request) => (await routes(req)) ?? new Response(null, { status: 404 });
 * export { handle as GET, handle as POST, handle as DELETE };
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function queueRoutes<Req extends Request = Request>(
  queue: WaitingQueue,
  options: FetchQueueRoutesOptions<Req>,
): (request: Req) => Promise<Response | undefined> {
  const q = parseQueue(queue);
  const { prefix, ...rest } = options;
  const resolved = parseRoutesOptions(rest);
  const { memberId, gate, identity, maxStreams } = resolved;
  const base = normalizePrefix(prefix);
  const routes = QUEUE_ROUTES.map((route) => ({ ...route, url: base + route.path || '/' }));
  const room = roomOf(q, resolved);
  const pages = room ? ROOM_ROUTES.map((route) => ({ ...route, url: base + route.path })) : [];
  const events = eventsRoute(q, maxStreams, gate);
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (request.method === 'GET' && path === base + EVENTS_PATH) return toEventResponse(await events(() => memberId(request), request), request.signal);
    const route = routes.find((r) => r.method === request.method && r.url === path);
    const pageRoute = route ? undefined : pages.find((r) => r.method === request.method && r.url === path);
    if (pageRoute) return toPageResponse(await room!.run(pageRoute.action, { member: () => memberId(request), req: request, url: request.url }));
    if (!route) return undefined;
    return toResponse(await runQueueRoute(q, route.action, () => memberId(request), { gate, identity, req: request }));
  };
}

/**
 * Guards an order handler: claims the `X-Entry-Token` of the member and calls `handler` with the
 * request and its entry (then any further arguments of the runtime, e.g. Next.js's `{ params }`).
 * Answers 401/409 for a missing, invalid or in-use token and 503 when the store is down, without
 * calling `handler` (unless `onStoreUnavailable: 'fail-open'`: then the entry may be `undefined`).
 *
 * With `settle: 'auto'` (default) a 2xx consumes the claim once its Response is finished, i.e. its
 * body was read to the end by the runtime writing it out (at once when it has no body); a non-2xx,
 * a thrown handler, a body cancelled before its end or a request whose `signal` aborts first (the
 * client hung up) releases it.
 * @example
 * ```ts
 * // app/api/orders/route.ts (Next.js)
 * export const POST = withEntryToken(queue, { memberId: (req) => currentUser(req)?.id }, async (req, entry) => {
 *   await db.insertOrder({ memberId: entry.memberId, tokenId: entry.tokenId }); // UNIQUE(tokenId)
 *   return Response.json({ ok: true }, { status: 201 }); // 2xx: consumed once sent
 * });
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function withEntryToken<Req extends Request = Request, Args extends unknown[] = [], Mode extends StoreUnavailableMode = 'fail-closed'>(
  queue: WaitingQueue,
  options: FetchRequireEntryTokenOptions<Req, Mode>,
  handler: (request: Req, entry: EntryFor<Mode>, ...args: Args) => Response | Promise<Response>,
): (request: Req, ...args: Args) => Promise<Response> {
  const q = parseQueue(queue);
  const config = parseGuardOptions(options);
  return async (request, ...args) =>
    guardRequest(q, config, await config.memberId(request), request, async (entry) => handler(request, entry as EntryFor<Mode>, ...args));
}

/**
 * Admits a request carrying the member's valid signed pass, without claiming it (the pages of a
 * multi-step checkout), and calls `handler` with the request and the pass. Answers 401 for a
 * missing or invalid pass before any store call (and 503 with `checkRevoked` when the store is down).
 * For Next.js middleware on the Edge, `verifyEntryPass` from `waitgate/pass` is the fit (no store).
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function withEntryPass<Req extends Request = Request, Args extends unknown[] = []>(
  source: EntryPassSource,
  options: RequireEntryPassOptions<Req>,
  handler: (request: Req, pass: EntryPass, ...args: Args) => Response | Promise<Response>,
): (request: Req, ...args: Args) => Promise<Response> {
  const guard = parsePassGuard(source, options);
  return async (request, ...args) => {
    const outcome = await guard.check(await guard.memberId(request), requestToken(request, guard.tokenHeader));
    return outcome.kind === 'respond' ? toResponse(outcome.result) : handler(request, outcome.pass, ...args);
  };
}
