// waitgate/koa against the shared behaviour table, over real HTTP.

import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { queueRoutes, requireEntryToken } from '../../src/http/koa.js';
import { describeAdapter, memberOf, orderBehaviour, type AppFactory } from './adapter-suite.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';

const koaApp: AppFactory = async ({ queue, settle, onStoreUnavailable, onOrder, routes }) => {
  const app = new Koa();
  app.silent = true; // the thrown-handler case is expected; keep the log quiet
  const memberId = (ctx: Koa.Context) => memberOf(ctx.headers);
  app.use(queueRoutes(queue, { memberId, prefix: '/queue', ...routes }));
  const guard = requireEntryToken(queue, { memberId, settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) });
  app.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== '/orders') return next();
    await guard(ctx, async () => {
      onOrder(ctx.state.entry);
      const { status, body } = await orderBehaviour(ctx.headers, ctx.state.entry);
      ctx.status = status;
      ctx.body = body;
    });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

describeAdapter('koa', koaApp);
describeGate('koa', koaApp);
describeEventStream('koa', koaApp);
