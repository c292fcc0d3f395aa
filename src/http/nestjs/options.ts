// waitgate/nestjs: the options of WaitgateModule.forRoot and of @RequireEntryToken, checked once, and the token that carries them.

import type { IncomingHttpHeaders } from 'node:http';
import { WaitgateConfigError } from '../../errors.js';
import { roomOf, type Room } from '../../room/routes.js';
import type { WaitingQueue } from '../../waiting-queue.js';
import {
  eventsRoute,
  normalizePrefix,
  parseGuardOptions,
  parseQueue,
  parseRoutesOptions,
  type EventsRoute,
  type MemberIdResolver,
  type QueueRoutesOptions,
  type ResolvedRoutesOptions,
  type RequireEntryTokenOptions,
  type ResolvedGuardOptions,
} from '../core.js';

/**
 * What waitgate reads of the request Nest hands over: its headers. The object is the
 * platform's own request, an Express `Request` on `@nestjs/platform-express` and a
 * `FastifyRequest` on `@nestjs/platform-fastify`; annotate your `memberId` parameter
 * with that type to read what your auth put there.
 */
export interface PlatformRequest {
  headers: IncomingHttpHeaders;
}

/** Options of {@link WaitgateModule.forRoot}. */
export interface WaitgateModuleOptions<Req = PlatformRequest> {
  /** The queue the routes and the guard work on. */
  queue: WaitingQueue;
  /**
   * The authenticated member of a request, given the platform's request (an Express
   * `Request` or a `FastifyRequest`); undefined or null answers 401. Used by the queue
   * routes and by every `@RequireEntryToken()` route.
   */
  memberId: MemberIdResolver<Req>;
  /**
   * Path of the queue routes' controller, e.g. `queue` (the default) or `api/queue`;
   * Nest's global prefix, if you set one, comes in front of it. `''` mounts them at the root.
   */
  routesPrefix?: string;
  /** The gate before the line, as in every adapter's queue routes (docs/fair-entry.md). */
  gate?: QueueRoutesOptions<Req>['gate'];
  /** One place per identity: the identity a request enters under, as in every adapter's queue routes (docs/fair-entry.md). */
  identity?: QueueRoutesOptions<Req>['identity'];
  /** Signs the shadow cookie; the same on every instance (see the other adapters' `shadowSecret`). */
  shadowSecret?: string;
  /** The waiting page at `GET <routesPrefix>/room`, as in every adapter (docs/waiting-room.md); `false`: none. */
  page?: QueueRoutesOptions<Req>['page'];
  /** Event streams (`GET <routesPrefix>/events`) this instance serves at once (default 10,000), as in every adapter. */
  maxStreams?: number;
}

/** Options of `@RequireEntryToken()`: the guard options of the other adapters, less `memberId` (set once, in `forRoot`). */
export type NestRequireEntryTokenOptions = Omit<RequireEntryTokenOptions<unknown>, 'memberId'>;

/** The module options, checked. */
export interface WaitgateModuleConfig {
  queue: WaitingQueue;
  memberId: MemberIdResolver<unknown>;
  /** '' or '/queue'. */
  routesPrefix: string;
  gate: ResolvedRoutesOptions<unknown>['gate'];
  identity: ResolvedRoutesOptions<unknown>['identity'];
  /** The waiting page's routes; null with `page: false`. */
  room: Room | null;
  /** The handler of `GET …/events`. */
  events: EventsRoute;
}

/** One route's guard settings, checked and with their defaults. */
export type RouteConfig = Omit<ResolvedGuardOptions<unknown>, 'memberId'>;

/** Injection token of the {@link WaitgateModuleConfig} (`Symbol.for`, so two copies of waitgate agree on it). */
export const WAITGATE_CONFIG = Symbol.for('waitgate.nestjs.config');

/** Checks forRoot's options. @throws {@link WaitgateConfigError} */
export function parseModuleOptions<Req>(options: WaitgateModuleOptions<Req>): WaitgateModuleConfig {
  if (typeof options !== 'object' || options === null) throw new WaitgateConfigError('options', 'must be an object');
  const { queue, memberId, routesPrefix = 'queue', ...rest } = options;
  const q = parseQueue(queue);
  const routes = parseRoutesOptions({ memberId, ...rest });
  return {
    queue: q,
    memberId: routes.memberId as MemberIdResolver<unknown>,
    routesPrefix: parsePrefix(routesPrefix),
    gate: routes.gate,
    identity: routes.identity,
    room: roomOf(q, routes),
    events: eventsRoute(q, routes.maxStreams, routes.gate),
  };
}

function parsePrefix(prefix: unknown): string {
  // Nest writes controller paths without the leading slash ('queue'); both are taken.
  const path = typeof prefix === 'string' && !prefix.startsWith('/') ? `/${prefix}` : prefix;
  try {
    return normalizePrefix(path);
  } catch {
    throw new WaitgateConfigError('routesPrefix', 'must be a path like queue or api/queue');
  }
}

/** Checks one route's options when the decorator is applied (so a typo fails at startup). @throws {@link WaitgateConfigError} */
export function parseRouteOptions(options: NestRequireEntryTokenOptions = {}): RouteConfig {
  if (typeof options === 'object' && options !== null && 'memberId' in options) {
    throw new WaitgateConfigError('memberId', 'is set once, in WaitgateModule.forRoot');
  }
  // The guard schema wants a resolver; the real one comes from forRoot at request time.
  const { memberId: _placeholder, ...route } = parseGuardOptions({ memberId: () => undefined, ...options });
  return route;
}
