// The same small app on every adapter, for the signed-pass tests (test/http/passes.test.ts and
// test/store/redis-passes.test.ts): the queue routes under /queue, `POST /orders` behind the
// token guard (auto settle, answers 201 { tokenId }), `GET /checkout` behind the pass guard
// (`session` options; answers 200 { memberId, tokenId, expiresAt }). The member comes from the `x-member` header.

import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import Fastify from 'fastify';
import { Hono, type Context } from 'hono';
import Koa from 'koa';
import type { WaitingQueue } from '../../src/index.js';
import type { RoomPageOptions } from '../../src/http/core.js';
import * as expressAdapter from '../../src/http/express.js';
import * as fastifyAdapter from '../../src/http/fastify.js';
import * as fetchAdapter from '../../src/http/fetch.js';
import * as honoAdapter from '../../src/http/hono.js';
import * as koaAdapter from '../../src/http/koa.js';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { EntryPass, RequireEntryPass, WaitgateModule, type NestRequireEntryPassOptions, type PlatformRequest } from '../../src/http/nestjs.js';
import type { EntryPass as Pass } from '../../src/http/entry-pass.js';
import { serveFetch } from '../support/serve-fetch.js';
import { headersOf, memberOf } from './adapter-suite.js';
import { decorateMethod, listen, ordersController } from './nestjs-app.js';

export interface PassApp {
  url: string;
  close(): Promise<void>;
}

/** `page`: the queue routes' waiting-page option (test/room). */
export type PassAppFactory = (queue: WaitingQueue, session?: NestRequireEntryPassOptions, page?: false | RoomPageOptions) => Promise<PassApp>;

async function listening(server: Server): Promise<PassApp> {
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const webMember = (request: Request) => memberOf(headersOf(request.headers));

export const PASS_APPS: Record<string, PassAppFactory> = {
  express: async (queue, session = {}, page) => {
    const app = express();
    const memberId = (req: express.Request) => memberOf(req.headers);
    app.use('/queue', expressAdapter.queueRoutes(queue, { memberId, page }));
    app.post('/orders', expressAdapter.requireEntryToken(queue, { memberId }), (req, res) => void res.status(201).json({ tokenId: req.entry!.tokenId }));
    app.get('/checkout', expressAdapter.requireEntryPass(queue, { memberId, ...session }), (req, res) => void res.json(req.entryPass));
    return listening(app.listen(0, '127.0.0.1'));
  },
  fastify: async (queue, session = {}, page) => {
    const app = Fastify();
    const memberId = (request: { headers: Record<string, string | string[] | undefined> }) => memberOf(request.headers);
    await app.register(fastifyAdapter.queueRoutes, { queue, memberId, prefix: '/queue', page });
    app.post('/orders', { preHandler: fastifyAdapter.requireEntryToken(queue, { memberId }) }, async (request, reply) =>
      reply.code(201).send({ tokenId: request.entry!.tokenId }),
    );
    app.get('/checkout', { preHandler: fastifyAdapter.requireEntryPass(queue, { memberId, ...session }) }, async (request) => request.entryPass);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  koa: async (queue, session = {}, page) => {
    const app = new Koa();
    app.silent = true;
    const memberId = (ctx: Koa.Context) => memberOf(ctx.headers);
    app.use(koaAdapter.queueRoutes(queue, { memberId, prefix: '/queue', page }));
    const guard = koaAdapter.requireEntryToken(queue, { memberId });
    const passGuard = koaAdapter.requireEntryPass(queue, { memberId, ...session });
    app.use(async (ctx, next) => {
      if (ctx.method === 'GET' && ctx.path === '/checkout') return passGuard(ctx, async () => void (ctx.body = ctx.state.entryPass));
      if (ctx.method !== 'POST' || ctx.path !== '/orders') return next();
      await guard(ctx, async () => {
        ctx.status = 201;
        ctx.body = { tokenId: ctx.state.entry!.tokenId };
      });
    });
    return listening(app.listen(0, '127.0.0.1'));
  },
  fetch: async (queue, session = {}, page) => {
    const routes = fetchAdapter.queueRoutes(queue, { memberId: webMember, prefix: '/queue', page });
    const order = fetchAdapter.withEntryToken(queue, { memberId: webMember }, async (_request, entry) =>
      Response.json({ tokenId: entry.tokenId }, { status: 201 }),
    );
    const checkout = fetchAdapter.withEntryPass(queue, { memberId: webMember, ...session }, async (_request, pass) => Response.json(pass));
    return serveFetch(async (request) => {
      const path = new URL(request.url).pathname;
      if (request.method === 'POST' && path === '/orders') return order(request);
      if (request.method === 'GET' && path === '/checkout') return checkout(request);
      return (await routes(request)) ?? new Response(null, { status: 404 });
    });
  },
  hono: async (queue, session = {}, page) => {
    const app = new Hono();
    const memberId = (c: Context) => webMember(c.req.raw);
    app.route('/queue', honoAdapter.queueRoutes(queue, { memberId, page }));
    app.post('/orders', honoAdapter.requireEntryToken(queue, { memberId }), (c) => c.json({ tokenId: c.var.entry.tokenId }, 201));
    app.get('/checkout', honoAdapter.requireEntryPass(queue, { memberId, ...session }), (c) => c.json(c.var.entryPass));
    return serveFetch(app.fetch);
  },
  nestjs: async (queue, session = {}, page) => {
    const adapter = new ExpressAdapter();
    const orders = ordersController(adapter, {}, () => undefined);
    class CheckoutController {
      show(pass: Pass, _req: PlatformRequest, res: unknown): void {
        adapter.reply(res, pass, 200);
      }
    }
    Controller('checkout')(CheckoutController);
    decorateMethod(CheckoutController.prototype, 'show', Get(), RequireEntryPass(session));
    EntryPass()(CheckoutController.prototype, 'show', 0);
    Req()(CheckoutController.prototype, 'show', 1);
    Res()(CheckoutController.prototype, 'show', 2);
    const module = WaitgateModule.forRoot({ queue, memberId: (req) => memberOf(req.headers), page });
    const { url, close } = await listen(adapter, [module], [orders, CheckoutController]);
    return { url, close };
  },
};
