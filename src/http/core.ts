// The framework-neutral HTTP mapping: queue results and errors -> { status, headers, body }.
// Each adapter (express.ts, fastify.ts, koa.ts, nestjs/, and fetch.ts and hono.ts through web.ts) is
// a thin shell over this file; how an order request ended settles its claim here (settleEnded).

import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { WaitgateConfigError } from '../errors.js';
import type { MemberId } from '../member-id.js';
import { parseStrict } from '../options.js';
import { REPORT_ERROR, type WaitingQueue } from '../waiting-queue.js';
import { createEntry, type Entry } from './entry.js';
import { NO_STORE, errorResponse, toHttpResponse } from './error-response.js';
import { gateOptionShapes, routeGate, type Gate, type RouteGate } from './gate.js';
import { positionResult, type HttpResult } from './result.js';
import { pageOptionShape, parsePage, type RoomPage, type RoomPageOptions } from '../room/options.js';
import { entryTokenOf } from './request-header.js';
import { enterCodeOf } from './enter-body.js';
import type { QueueEnterOptions } from '../enter-options.js';

export { entryTokenOf };
import { DEFAULT_MAX_STREAMS, EventHub, type StreamOpening } from './event-stream.js';

export type { Entry, SettleOutcome, SettleState } from './entry.js';
export type { MemberStreamHandle, StreamOpening, StreamSink } from './event-stream.js';
export { positionResult, type HttpResult } from './result.js';
export type { RoomPageOptions } from '../room/options.js';
export type { RoomTexts } from '../room/en.js';
export type { ChallengeBody, Gate, GateContext, GateDecision, GateVerdict } from './gate.js';
export { toHttpResponse, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, type ErrorBody, type HttpErrorCode, type HttpErrorResponse } from './error-response.js';

/** Returns the authenticated member of a request, or undefined/null when there is none (401). */
export type MemberIdResolver<Req> = (req: Req) => MemberId | null | undefined | Promise<MemberId | null | undefined>;

/** Returns the identity a request enters under (an account, a verified phone), or undefined/null for none. */
export type IdentityResolver<Req> = (req: Req) => string | null | undefined | Promise<string | null | undefined>;

/** Options of the queue routes. */
export interface QueueRoutesOptions<Req> {
  /** The authenticated member of the request; undefined or null answers 401. */
  memberId: MemberIdResolver<Req>;
  /**
   * Asked before `POST …/enter` writes anything (docs/fair-entry.md): `allow` enters as usual,
   * `challenge` answers 401 CHALLENGE_REQUIRED with the challenge in the body, `shadow` answers
   * a WAITING position that never reaches the head and writes nothing to the store.
   */
  gate?: Gate<Req>;
  /**
   * One place per identity (docs/fair-entry.md): the identity `POST …/enter` enters under, asked
   * after the gate allowed it. A new member whose identity's other members already hold the
   * queue's `maxPlacesPerIdentity` places (default 1) gets 409 IDENTITY_LIMIT, nothing written.
   */
  identity?: IdentityResolver<Req>;
  /**
   * Signs the cookie that recognises a shadowed member's later polls. Give every instance the
   * same secret (16+ characters); without one, a shadowed member is recognised only by the
   * instance that shadowed it.
   */
  shadowSecret?: string;
  /**
   * The waiting page at `GET <prefix>/room` (docs/waiting-room.md): where a READY member goes
   * next, the pass cookie's path, theme, texts and locales. `false`: no page (nor its CSS and script).
   */
  page?: false | RoomPageOptions;
  /**
   * Event streams (`GET …/events`) this instance serves at once; past it a new stream gets
   * 503 TOO_MANY_STREAMS with Retry-After, and clients poll instead. Default 10,000.
   */
  maxStreams?: number;
}

/** Validated queue-route options: the resolvers, the gate as the routes run it, the page (null: none) and the stream limit. */
export interface ResolvedRoutesOptions<Req> {
  memberId: MemberIdResolver<Req>;
  gate: RouteGate | undefined;
  identity: IdentityResolver<unknown> | undefined;
  page: RoomPage | null;
  maxStreams: number;
}

/** Options of the order-route guard. */
export interface RequireEntryTokenOptions<Req> {
  /** The authenticated member of the request; undefined or null answers 401. */
  memberId: MemberIdResolver<Req>;
  /** Request header carrying the entry token. Default `x-entry-token`. */
  tokenHeader?: string;
  /**
   * `auto` (default): consume when the response finishes with a 2xx status,
   * release otherwise (including a client that hung up). `manual`: the handler
   * calls `entry.consume()` / `entry.release()` itself, typically right after commit.
   */
  settle?: 'auto' | 'manual';
  /**
   * What to do when the store cannot be reached. `fail-closed` (default): answer
   * 503 with Retry-After; the order handler is never reached. `fail-open`: let the
   * request through WITHOUT an entry (the handler sees none and must decide; the
   * queue then protects nothing). Choose fail-open only on purpose.
   */
  onStoreUnavailable?: 'fail-closed' | 'fail-open';
}

/** The queue routes, relative to where they are mounted. */
export const QUEUE_ROUTES = [
  { method: 'POST', path: '/enter', action: 'enter' },
  { method: 'GET', path: '/position', action: 'position' },
  { method: 'DELETE', path: '', action: 'leave' },
  // Public (no member): the keys that verify the queue's signed passes, for edges and other services.
  { method: 'GET', path: '/.well-known/jwks.json', action: 'jwks' },
] as const;

export type QueueAction = (typeof QUEUE_ROUTES)[number]['action'];

/** The event stream's route (`GET`), relative to where the queue routes are mounted (event-stream.ts). */
export const EVENTS_PATH = '/events';

/**
 * The handler of `GET …/events` for one queue routes: 401 without a member, else the member's
 * stream (or 503 past `maxStreams`, 400/503 as the position route). Errors that are not
 * waitgate's are rethrown for the framework's error handling.
 */
export function eventsRoute(queue: WaitingQueue, maxStreams: number, gate?: RouteGate): EventsRoute {
  const hub = new EventHub(queue, maxStreams);
  const route = async (member: () => unknown, req?: unknown): Promise<StreamOpening> => {
    const id = await member();
    if (id === undefined || id === null) return { kind: 'respond', result: UNAUTHENTICATED() };
    // A shadowed member is refused as a full instance refuses anyone: its polls answer its shadow place.
    if (gate?.shadowed(id, req)) return hub.refuse();
    return hub.open(id as MemberId);
  };
  return Object.assign(route, { endAll: () => hub.endAll() });
}

/** The handler of `GET …/events`, and `endAll()` for a server that closes (its streams would hold it open). */
export type EventsRoute = ((member: () => unknown, req?: unknown) => Promise<StreamOpening>) & { endAll(): void };

const resolver = z.custom<MemberIdResolver<unknown>>((f) => typeof f === 'function', 'must be a function (req) => member id | undefined');
// Duck-typed rather than instanceof: the ESM and CJS builds each have their own WaitingQueue class.
const QUEUE_METHODS = ['enter', 'position', 'leave', 'claim', 'consume', 'release', REPORT_ERROR] as const;
const queueSchema = z.custom<WaitingQueue>(
  (q) => typeof q === 'object' && q !== null && QUEUE_METHODS.every((m) => typeof (q as Record<PropertyKey, unknown>)[m] === 'function'),
  'must be a WaitingQueue',
);
const routesSchema = z.strictObject({
  memberId: resolver,
  identity: z.custom<IdentityResolver<unknown>>((f) => typeof f === 'function', 'must be a function (req) => identity | undefined').optional(),
  maxStreams: z.number().int().min(0).max(10_000_000).default(DEFAULT_MAX_STREAMS),
  ...gateOptionShapes,
  ...pageOptionShape,
});
const guardSchema = z.strictObject({
  memberId: resolver,
  tokenHeader: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name')
    .default('x-entry-token'),
  settle: z.enum(['auto', 'manual']).default('auto'),
  onStoreUnavailable: z.enum(['fail-closed', 'fail-open']).default('fail-closed'),
});

/** Validates a WaitingQueue argument. @throws {@link WaitgateConfigError} */
export function parseQueue(queue: unknown): WaitingQueue {
  return parseStrict(z.strictObject({ queue: queueSchema }), { queue }).queue;
}

/** Validates queue-route options (extra keys an adapter owns, like `prefix`, are taken out first). */
export function parseRoutesOptions<Req>(options: QueueRoutesOptions<Req>): ResolvedRoutesOptions<Req> {
  const parsed = parseStrict(routesSchema, options);
  return {
    memberId: parsed.memberId as MemberIdResolver<Req>,
    gate: routeGate(parsed),
    identity: parsed.identity,
    page: parsePage(parsed.page),
    maxStreams: parsed.maxStreams,
  };
}

export type ResolvedGuardOptions<Req> = Required<RequireEntryTokenOptions<Req>>;

/** Validates guard options and applies defaults. */
export function parseGuardOptions<Req>(options: RequireEntryTokenOptions<Req>): ResolvedGuardOptions<Req> {
  const parsed = parseStrict(guardSchema, options);
  return { ...parsed, tokenHeader: parsed.tokenHeader.toLowerCase() } as ResolvedGuardOptions<Req>;
}

/** Normalises a mount prefix: '' or '/queue' (leading slash, no trailing one). */
export function normalizePrefix(prefix: unknown): string {
  if (prefix === undefined || prefix === '' || prefix === '/') return '';
  if (typeof prefix !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(prefix)) {
    throw new WaitgateConfigError('prefix', 'must be a path like /queue');
  }
  return prefix.replace(/\/+$/, '');
}

export const UNAUTHENTICATED = () => errorResponse(401, 'UNAUTHENTICATED', 'Sign in to join the queue.');

/** The JWKS route's answer: public, cacheable for five minutes (a rotation adds a key well before it signs). */
export const JWKS_CACHE_CONTROL = 'public, max-age=300';

/** A member route's request with what the routes' options ask of it: the gate and the identity resolver. */
export interface RouteRequest {
  gate: RouteGate | undefined;
  identity?: IdentityResolver<unknown> | undefined;
  req: unknown;
  /** An enter's invite code from elsewhere than its JSON body (the waiting page's no-JavaScript form: its address's `?code=`); judged as the body's. */
  code?: string | undefined;
}

/**
 * Runs one queue route; `member` resolves the request's member (the `memberId(req)`
 * option), asked for every route but the public JWKS; a member route goes through the gate
 * of the routes' options when there is one, and an enter asks the `identity(req)` option
 * (`request`: those and the request they judge).
 * Errors that are not waitgate's are rethrown for the framework's error handling.
 */
export async function runQueueRoute(queue: WaitingQueue, action: QueueAction, member: () => unknown, request?: RouteRequest): Promise<HttpResult> {
  if (action === 'jwks') return { status: 200, headers: { 'cache-control': JWKS_CACHE_CONTROL }, body: queue.jwks() };
  return memberRoute(queue, action, await member(), request);
}

async function memberRoute(queue: WaitingQueue, action: Exclude<QueueAction, 'jwks'>, member: unknown, request?: RouteRequest): Promise<HttpResult> {
  if (member === undefined || member === null) return UNAUTHENTICATED();
  try {
    const id = member as MemberId;
    const judged = request?.gate && (await request.gate.run(queue, action, id, request.req));
    if (judged) return judged;
    if (action === 'leave') {
      await queue.leave(id);
      return { status: 204, headers: { ...NO_STORE } };
    }
    const position = action === 'enter' ? await queue.enter(id, await enterOptions(queue, request)) : await queue.position(id);
    request?.gate?.observe(position);
    return positionResult(position);
  } catch (error) {
    const result = toHttpResponse(error);
    if (result) return result;
    throw error;
  }
}

/**
 * What an enter brings besides the member: the `identity(req)` option's answer, and the invite
 * code of its body `{ "code": "..." }` (a queue without lanes reads no body: it pays nothing).
 */
async function enterOptions(queue: WaitingQueue, request: RouteRequest | undefined): Promise<QueueEnterOptions> {
  if (request === undefined) return {};
  const identity = request.identity ? ((await request.identity(request.req)) ?? undefined) : undefined;
  const code = queue.config.lanes.length === 0 ? undefined : (request.code ?? (await enterCodeOf(request.req)));
  return { ...(identity === undefined ? {} : { identity }), ...(code === undefined ? {} : { code: code as string }) };
}

/** What the guard decided: let the request through with an entry, through without one (fail-open), or answer now. */
export type GuardOutcome = { kind: 'entry'; entry: Entry } | { kind: 'open' } | { kind: 'respond'; result: HttpResult };

/**
 * Claims the token of one order request. `tokenHeaderValue` is the raw header
 * value (a repeated header arrives as an array or a joined string: both INVALID).
 */
export async function runGuard<Req>(
  queue: WaitingQueue,
  options: ResolvedGuardOptions<Req>,
  member: unknown,
  tokenHeaderValue: string | string[] | undefined,
): Promise<GuardOutcome> {
  if (member === undefined || member === null) return { kind: 'respond', result: UNAUTHENTICATED() };
  try {
    const claim = await queue.claim(member as MemberId, entryTokenOf(tokenHeaderValue));
    return { kind: 'entry', entry: createEntry(queue, claim) };
  } catch (error) {
    const result = toHttpResponse(error);
    if (!result) throw error;
    if (result.body.error.code === 'STORE_UNAVAILABLE' && options.onStoreUnavailable === 'fail-open') return { kind: 'open' };
    return { kind: 'respond', result };
  }
}

/**
 * How an order request ended, as an adapter sees it: the status it finished with, an
 * error the handler threw (before or instead of an answer), or a connection dropped
 * before the response finished.
 */
export interface OrderEnd {
  status?: number;
  thrown?: boolean;
  error?: unknown;
  aborted?: boolean;
}

/**
 * Whether the order path failed (SPEC §14), so that a release counts as a failed order
 * for adaptive admission: a dropped connection, a 5xx, or a thrown handler. A 4xx is an
 * answer the app gave on purpose (validation, out of stock, payment declined), also when
 * it came from a thrown error that declares it (`HttpException`, `HTTPException`,
 * http-errors: `getStatus()`, `status` or `statusCode`) or that the framework answered
 * with it. Any other status (3xx, a 2xx a thrown error was turned into) is no failure
 * unless something was thrown.
 */
export function orderFailed(end: OrderEnd): boolean {
  if (end.aborted) return true;
  const status = end.status ?? (end.thrown ? declaredStatus(end.error) : undefined);
  if (status !== undefined && status >= 400 && status < 500) return false;
  return end.thrown === true || status === undefined || status >= 500;
}

/** The HTTP status a thrown error declares, if any. */
function declaredStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { getStatus?: unknown; status?: unknown; statusCode?: unknown };
  let status: unknown;
  try {
    status = typeof e.getStatus === 'function' ? (e.getStatus as () => unknown).call(error) : (e.status ?? e.statusCode);
  } catch {
    return undefined;
  }
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

/**
 * Auto settle of an entry from how its request ended, the one place every adapter
 * decides it: a 2xx that finished (nothing thrown) consumes; anything else releases,
 * counted as a failed order only when {@link orderFailed}.
 */
export function settleEnded(entry: Entry, end: OrderEnd): void {
  const ok = !end.aborted && !end.thrown && end.status !== undefined && end.status >= 200 && end.status < 300;
  void (ok ? entry.consume() : entry.release({ failed: orderFailed(end) }));
}

/**
 * Auto settle on Node's response: consume when it finished with a 2xx status, release
 * when it finished otherwise or the connection closed before it finished.
 */
export function settleWhenFinished(res: ServerResponse, entry: Entry): void {
  let done = false;
  const settle = (finished: boolean) => {
    if (done) return;
    done = true;
    settleEnded(entry, finished ? { status: res.statusCode } : { aborted: true });
  };
  res.once('finish', () => settle(true));
  res.once('close', () => settle(res.writableFinished));
}
