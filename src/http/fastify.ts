// waitgate/fastify: the queue routes as a plugin (fastify-plugin), and the order-route guard as a preHandler.

import type { FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
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

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireEntryToken` from waitgate/fastify: the claimed entry of this order request. */
    entry?: Entry;
    /** Set by `requireEntryPass` from waitgate/fastify: the member's valid signed pass (not claimed). */
    entryPass?: EntryPass;
  }
}

/** Options of the Fastify queue-routes plugin. */
export interface FastifyQueueRoutesOptions extends Pick<QueueRoutesOptions<FastifyRequest>, 'gate' | 'identity' | 'shadowSecret' | 'page' | 'maxStreams'> {
  queue: WaitingQueue;
  /** The authenticated member of the request; undefined or null answers 401. */
  memberId: MemberIdResolver<FastifyRequest>;
  /** Where the routes live, e.g. `/queue`. Applied by the plugin itself (fastify-plugin does not encapsulate). */
  prefix?: string;
}

/** Options of the Fastify guard. */
export type FastifyRequireEntryTokenOptions = RequireEntryTokenOptions<FastifyRequest>;

function send(reply: FastifyReply, result: HttpResult): FastifyReply {
  reply.code(result.status).headers(result.headers);
  return result.body === undefined ? reply.send() : reply.send(result.body);
}

const plugin: FastifyPluginAsync<FastifyQueueRoutesOptions> = async (app, options) => {
  // Fastify's own register options reach the plugin too; they are Fastify's, not ours to refuse.
  const {
    queue,
    memberId: resolver,
    prefix,
    logLevel: _logLevel,
    logSerializers: _logSerializers,
    ...rest
  } = options as FastifyQueueRoutesOptions & {
    logLevel?: unknown;
    logSerializers?: unknown;
  };
  const q = parseQueue(queue);
  const resolved = parseRoutesOptions({ memberId: resolver, ...rest });
  const { memberId, gate, identity, maxStreams } = resolved;
  const base = normalizePrefix(prefix);
  const events = eventsRoute(q, maxStreams, gate);
  app.addHook('preClose', async () => events.endAll()); // app.close() waits for open responses
  app.get(base + EVENTS_PATH, async (request, reply) => {
    const opening = await events(() => memberId(request), request);
    if (opening.kind === 'respond') return send(reply, opening.result);
    reply.hijack(); // the stream writes the raw response; Fastify sends nothing more
    streamToNode(reply.raw, opening.headers, opening.stream);
  });
  // Declare request.entry (set by requireEntryToken) up front, as Fastify wants of every
  // request property, so requests keep one shape. Once, however many queues are registered.
  if (!app.hasRequestDecorator('entry')) app.decorateRequest('entry', undefined);
  for (const route of QUEUE_ROUTES) {
    app.route({
      method: route.method,
      url: base + route.path || '/',
      handler: async (request, reply) => send(reply, await runQueueRoute(q, route.action, () => memberId(request), { gate, identity, req: request })),
    });
  }
  const room = roomOf(q, resolved);
  for (const route of room ? ROOM_ROUTES : []) {
    app.route({
      method: route.method,
      url: base + route.path,
      handler: async (request, reply) => {
        const page = await room!.run(route.action, { member: () => memberId(request), req: request, url: request.url });
        return reply.code(page.status).headers(page.headers).send(page.body);
      },
    });
  }
};

/**
 * A plugin registering `POST <prefix>/enter`, `GET <prefix>/position`, `GET <prefix>/events` (Server-Sent Events) and `DELETE <prefix>` (leave).
 * @example
 * ```ts
 * await app.register(queueRoutes, { queue, memberId: (request) => request.user?.id, prefix: '/queue' });
 * ```
 */
export const queueRoutes: FastifyPluginAsync<FastifyQueueRoutesOptions> = fp(plugin, { fastify: '5.x', name: 'waitgate' });

/**
 * A preHandler guarding an order route: claims the `X-Entry-Token` of the member and
 * exposes it as `request.entry`. Answers 401/409/503 itself, with waitgate's error body.
 * @example
 * ```ts
 * app.post('/orders', { preHandler: requireEntryToken(queue, { memberId }) }, handler);
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryToken(queue: WaitingQueue, options: FastifyRequireEntryTokenOptions): preHandlerAsyncHookHandler {
  const q = parseQueue(queue);
  const config = parseGuardOptions(options);
  return async function waitgateGuard(request, reply) {
    const outcome = await runGuard(q, config, await config.memberId(request), requestToken(request, config.tokenHeader));
    if (outcome.kind === 'respond') return send(reply, outcome.result);
    if (outcome.kind === 'entry') {
      request.entry = outcome.entry;
      if (config.settle === 'auto') settleWhenFinished(reply.raw, outcome.entry);
    }
  };
}

/**
 * A preHandler admitting a request that carries the member's valid signed pass, without claiming
 * it: sets `request.entryPass`. Answers 401 (and 503 with `checkRevoked` when the store is down) itself.
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function requireEntryPass(source: EntryPassSource, options: RequireEntryPassOptions<FastifyRequest>): preHandlerAsyncHookHandler {
  const guard = parsePassGuard(source, options);
  return async function waitgatePassGuard(request, reply) {
    const outcome = await guard.check(await guard.memberId(request), requestToken(request, guard.tokenHeader));
    if (outcome.kind === 'respond') return send(reply, outcome.result);
    request.entryPass = outcome.pass;
  };
}
