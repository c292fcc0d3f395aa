// waitgate/nestjs: the queue routes as a controller, made per forRoot call so its path comes from `routesPrefix`.

import { Controller, Delete, Get, Inject, Post, Req, Res, type Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { EVENTS_PATH, QUEUE_ROUTES, runQueueRoute, type HttpResult, type QueueAction } from '../core.js';
import { ROOM_ROUTES, type RoomAction } from '../../room/routes.js';
import { streamToNode } from '../node-events.js';
import { WAITGATE_CONFIG, type PlatformRequest, type WaitgateModuleConfig } from './options.js';

const MAPPINGS = { POST: Post, GET: Get, DELETE: Delete } as const;

/**
 * Applies method decorators to `prototype[name]` as TypeScript's decorator emit does:
 * the last listed first, each one's returned descriptor handed to the next.
 */
export function decorateMethod(prototype: object, name: string, ...decorators: MethodDecorator[]): void {
  let descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  if (descriptor === undefined) throw new Error(`waitgate: no method ${name} to decorate`);
  for (const decorator of [...decorators].reverse()) descriptor = decorator(prototype, name, descriptor) ?? descriptor;
  Object.defineProperty(prototype, name, descriptor);
}

/**
 * A controller at `routesPrefix` answering `POST enter`, `GET position`, `GET events` (Server-Sent
 * Events) and `DELETE` (leave) for the member `memberId(request)` returns, and `GET .well-known/jwks.json`. It writes each answer itself
 * (status, headers, body) through Nest's HTTP adapter, on Express and Fastify alike, so
 * the answers are those of every waitgate adapter whatever interceptors or filters the
 * app adds: the polling client depends on them.
 */
export function createQueueController(routesPrefix: string, withRoom: boolean): Type<unknown> {
  class WaitgateQueueController {
    constructor(
      private readonly config: WaitgateModuleConfig,
      private readonly adapterHost: HttpAdapterHost,
    ) {}

    enter(request: PlatformRequest, response: unknown): Promise<void> {
      return this.answer('enter', request, response);
    }

    position(request: PlatformRequest, response: unknown): Promise<void> {
      return this.answer('position', request, response);
    }

    leave(request: PlatformRequest, response: unknown): Promise<void> {
      return this.answer('leave', request, response);
    }

    jwks(request: PlatformRequest, response: unknown): Promise<void> {
      return this.answer('jwks', request, response);
    }

    /** The waiting page's routes (GET room, POST room, GET room.css, GET room.js): text answers. */
    async page(action: RoomAction, request: PlatformRequest & { url?: string; originalUrl?: string }, response: unknown): Promise<void> {
      const url = request.originalUrl ?? request.url ?? '';
      const result = await this.config.room!.run(action, { member: () => this.config.memberId(request), req: request, url });
      const adapter = this.adapterHost.httpAdapter;
      for (const [name, value] of Object.entries(result.headers)) adapter.setHeader(response, name, value);
      adapter.reply(response, result.body, result.status);
    }

    /** Nest's hook before the server closes: ends the streams, which would hold it open (clients reconnect elsewhere). */
    beforeApplicationShutdown(): void {
      this.config.events.endAll();
    }

    /** `GET events`: the member's event stream, written on Node's response (Fastify's reply hijacked first). */
    async events(request: PlatformRequest, response: unknown): Promise<void> {
      const opening = await this.config.events(() => this.config.memberId(request), request);
      if (opening.kind === 'respond') return this.send(response, opening.result);
      const reply = response as { raw?: ServerResponse; hijack?: () => void };
      reply.hijack?.();
      streamToNode(reply.raw ?? (response as ServerResponse), opening.headers, opening.stream);
    }

    private async answer(action: QueueAction, request: PlatformRequest, response: unknown): Promise<void> {
      this.send(response, await runQueueRoute(this.config.queue, action, () => this.config.memberId(request), { gate: this.config.gate, identity: this.config.identity, req: request }));
    }

    private send(response: unknown, result: HttpResult): void {
      const adapter = this.adapterHost.httpAdapter;
      for (const [name, value] of Object.entries(result.headers)) adapter.setHeader(response, name, value);
      adapter.reply(response, result.body, result.status);
    }
  }

  Controller(routesPrefix)(WaitgateQueueController);
  Inject(WAITGATE_CONFIG)(WaitgateQueueController, undefined, 0);
  Inject(HttpAdapterHost)(WaitgateQueueController, undefined, 1);
  const prototype = WaitgateQueueController.prototype;
  for (const route of QUEUE_ROUTES) {
    Req()(prototype, route.action, 0);
    Res()(prototype, route.action, 1);
    decorateMethod(prototype, route.action, MAPPINGS[route.method](route.path.replace(/^\//, '')));
  }
  // Nest drops a path's trailing slash: `room/` would declare `room` twice (the page's answer to `room/` redirects all the same).
  for (const route of withRoom ? ROOM_ROUTES.filter((r) => r.action !== 'slash') : []) {
    const name = `room_${route.action}`;
    Object.defineProperty(prototype, name, {
      value(this: WaitgateQueueController, request: PlatformRequest, response: unknown) {
        return this.page(route.action, request, response);
      },
      writable: true,
      configurable: true,
    });
    Req()(prototype, name, 0);
    Res()(prototype, name, 1);
    decorateMethod(prototype, name, MAPPINGS[route.method](route.path.replace(/^\//, '')));
  }
  Req()(prototype, 'events', 0);
  Res()(prototype, 'events', 1);
  decorateMethod(prototype, 'events', Get(EVENTS_PATH.slice(1)));
  return WaitgateQueueController;
}
