// The shared behaviour table's app on NestJS, for either platform (nestjs-express.test.ts, nestjs-fastify.test.ts).
//
// Vitest compiles test files with oxc and the root tsconfig, which has no
// `experimentalDecorators`: decorator syntax does not compile here (a parameter decorator
// is "not valid here"), and `tsc --noEmit` over test/ would refuse it too. So the tests
// apply Nest's decorators as the calls TypeScript's decorator emit makes, as src/ does.
// test/types/cases/nestjs checks the same API written with real decorators.

import 'reflect-metadata';
import { Controller, Post, Req, Res, type INestApplication, type Type } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  Entry,
  RequireEntryToken,
  WaitgateModule,
  type NestRequireEntryTokenOptions,
  type PlatformRequest,
  type WaitgateModuleOptions,
} from '../../src/http/nestjs.js';
import { decorateMethod } from '../../src/http/nestjs/queue-controller.js';
import { memberOf, orderBehaviour, type AppFactory } from './adapter-suite.js';

export { decorateMethod };

/** Starts a Nest app on a free port of 127.0.0.1, with Nest's logger off. */
export async function listen(adapter: AbstractHttpAdapter, imports: unknown[], controllers: Type<unknown>[], setup?: (app: INestApplication) => void) {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[], controllers }).compile();
  const app = moduleRef.createNestApplication(adapter, { logger: false });
  setup?.(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl(), close: () => app.close() };
}

/**
 * The suite's order controller: `POST /orders` behind `@RequireEntryToken(options)`, the
 * handler written as `create(@Entry() entry, @Req() req, @Res() res)`. It answers through
 * the platform's adapter, with the status the suite asks for.
 */
export function ordersController(
  adapter: AbstractHttpAdapter,
  options: NestRequireEntryTokenOptions,
  onOrder: (entry: Entry | undefined) => void,
): Type<unknown> {
  class OrdersController {
    async create(entry: Entry | undefined, req: PlatformRequest, res: unknown): Promise<void> {
      onOrder(entry);
      const { status, body } = await orderBehaviour(req.headers, entry);
      adapter.reply(res, body, status);
    }
  }
  Controller('orders')(OrdersController);
  decorateMethod(OrdersController.prototype, 'create', Post(), RequireEntryToken(options));
  Entry()(OrdersController.prototype, 'create', 0);
  Req()(OrdersController.prototype, 'create', 1);
  Res()(OrdersController.prototype, 'create', 2);
  return OrdersController;
}

/** The behaviour table's app on one platform. */
export function nestAppFactory(makeAdapter: () => AbstractHttpAdapter): AppFactory {
  return async ({ queue, settle, onStoreUnavailable, onOrder, routes }) => {
    const adapter = makeAdapter();
    const memberId: WaitgateModuleOptions['memberId'] = (req) => memberOf(req.headers);
    const orders = ordersController(adapter, { settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) }, onOrder);
    const { url, close } = await listen(adapter, [WaitgateModule.forRoot({ queue, memberId, ...routes })], [orders]);
    return { url, close };
  };
}
