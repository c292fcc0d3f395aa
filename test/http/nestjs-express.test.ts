// waitgate/nestjs on @nestjs/platform-express against the shared behaviour table, over real HTTP,
// and what is Nest's own: the module's options, routesPrefix, exception filters and guard order.

import {
  Catch,
  ConflictException,
  Controller,
  ForbiddenException,
  Module,
  Post,
  UseFilters,
  UseGuards,
  type ArgumentsHost,
  type ExceptionFilter,
  type ExecutionContext,
} from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue } from '../../src/index.js';
import { Entry, RequireEntryToken, WaitgateHttpException, WaitgateModule, type WaitgateModuleOptions } from '../../src/http/nestjs.js';
import { describeAdapter } from './adapter-suite.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';
import { decorateMethod, listen, nestAppFactory } from './nestjs-app.js';

describeAdapter(
  'nestjs (express)',
  nestAppFactory(() => new ExpressAdapter()),
);
describeGate(
  'nestjs (express)',
  nestAppFactory(() => new ExpressAdapter()),
);
describeEventStream(
  'nestjs (express)',
  nestAppFactory(() => new ExpressAdapter()),
);

const memberId = (req: Request) => req.get('x-member');

async function admitted(queue: WaitingQueue, member: string) {
  await queue.enter(member);
  return (await queue.admit()).find((a) => a.memberId === member)!.entryToken;
}

describe('nestjs: WaitgateModule.forRoot', () => {
  it('gives memberId the Express Request', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId })], []);
    try {
      const response = await fetch(`${url}/queue/enter`, { method: 'POST', headers: { 'x-member': 'alice' } });
      expect(await response.json()).toMatchObject({ status: 'WAITING', rank: 0 });
    } finally {
      await close();
    }
  });

  it.each([
    ['api/waitgate', '/api/waitgate'],
    ['/api/waitgate/', '/api/waitgate'],
    ['', ''],
  ])('mounts the queue routes at routesPrefix %j, under the global prefix', async (routesPrefix, path) => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId, routesPrefix })], [], (app) =>
      app.setGlobalPrefix('v1'),
    );
    try {
      expect((await fetch(`${url}/v1${path}/enter`, { method: 'POST', headers: { 'x-member': 'alice' } })).status).toBe(200);
      expect((await fetch(`${url}/v1${path}/position`, { headers: { 'x-member': 'alice' } })).status).toBe(200);
      expect((await fetch(`${url}/v1${path}`, { method: 'DELETE', headers: { 'x-member': 'alice' } })).status).toBe(204);
      if (path !== '') expect((await fetch(`${url}/v1/queue/enter`, { method: 'POST', headers: { 'x-member': 'alice' } })).status).toBe(404);
    } finally {
      await close();
    }
  });

  it('refuses bad options with WaitgateConfigError naming them', () => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const bad: Array<[unknown, string]> = [
      [{ queue, memberId, prefix: '/queue' }, 'prefix'],
      [{ queue, memberId, routesPrefix: 'a b' }, 'routesPrefix'],
      [{ queue: {}, memberId }, 'queue'],
      [{ queue }, 'memberId'],
      [undefined, 'options'],
    ];
    for (const [options, option] of bad) {
      const call = () => WaitgateModule.forRoot(options as WaitgateModuleOptions);
      expect(call).toThrow(WaitgateConfigError);
      expect(call).toThrow(expect.objectContaining({ option }));
    }
  });
});

describe('nestjs: @RequireEntryToken', () => {
  it('refuses bad options when applied, and memberId (set once, in forRoot)', () => {
    expect(() => RequireEntryToken({ settle: 'sometimes' as 'auto' })).toThrow(expect.objectContaining({ option: 'settle' }));
    expect(() => RequireEntryToken({ tokenHeaders: 'x' } as never)).toThrow(expect.objectContaining({ option: 'tokenHeaders' }));
    expect(() => RequireEntryToken({ memberId: () => 'a' } as never)).toThrow(expect.objectContaining({ option: 'memberId' }));
  });

  /** POST /orders behind the guard, with the given handler and extra decorators (applied as listed above it). */
  function orders(handler: (entry: Entry | undefined) => unknown, ...decorators: MethodDecorator[]) {
    class Orders {
      create(entry: Entry | undefined) {
        return handler(entry);
      }
    }
    Controller('orders')(Orders);
    decorateMethod(Orders.prototype, 'create', Post(), ...decorators);
    Entry()(Orders.prototype, 'create', 0);
    return Orders;
  }

  it('refuses through Nest exception handling: a filter of yours sees a WaitgateHttpException (here after a consumed token), its headers already set', async () => {
    const caught: unknown[] = [];
    class Seen implements ExceptionFilter {
      catch(exception: WaitgateHttpException, host: ArgumentsHost) {
        caught.push(exception);
        host.switchToHttp().getResponse().status(exception.getStatus()).json({ wrapped: exception.getResponse() });
      }
    }
    Catch(WaitgateHttpException)(Seen);
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const token = await admitted(queue, 'alice');
    const Orders = orders(() => ({ ok: true }), RequireEntryToken(), UseFilters(new Seen()));
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId })], [Orders]);
    try {
      expect((await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-entry-token': token } })).status).toBe(201);
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-entry-token': token } });
      expect(response.status).toBe(401);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({ wrapped: { error: { code: 'ENTRY_TOKEN_INVALID', message: expect.any(String) } } });
      expect(caught).toHaveLength(1);
      expect(caught[0]).toBeInstanceOf(WaitgateHttpException);
      expect((caught[0] as WaitgateHttpException).headers).toEqual({ 'cache-control': 'no-store' });
    } finally {
      await close();
    }
  });

  it('releases when the handler throws, even if a filter of yours answers the exception with a 2xx', async () => {
    class Lenient implements ExceptionFilter {
      catch(_exception: unknown, host: ArgumentsHost) {
        host.switchToHttp().getResponse().status(200).json({ ok: false });
      }
    }
    Catch()(Lenient);
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const token = await admitted(queue, 'alice');
    const Orders = orders(
      () => {
        throw new ConflictException('sold out');
      },
      RequireEntryToken(),
      UseFilters(new Lenient()),
    );
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId })], [Orders]);
    try {
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-entry-token': token } });
      expect(response.status).toBe(200);
      await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
      expect(await queue.state('alice')).toBe('READY'); // released, not consumed: the same token works again
    } finally {
      await close();
    }
  });

  it('adaptive admission: a thrown HttpException below 500 (ConflictException: sold out) releases without counting a failed order; a thrown Error counts one', async () => {
    let now = Date.now();
    const admission = { mode: 'adaptive', targetLatencyMs: 600_000, minRatePerSecond: 1, maxRatePerSecond: 10 } as const;
    const queue = new WaitingQueue({ store: new MemoryStore({ now: () => now }), admitRatePerSecond: 10, admission });
    let fail: () => never = () => {
      throw new ConflictException('sold out');
    };
    const Orders = orders(() => fail(), RequireEntryToken());
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId })], [Orders]);
    const token = await admitted(queue, 'alice'); // released each time: usable again
    const rateAfter = async (status: number) => {
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-entry-token': token } });
      expect(response.status).toBe(status);
      await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
      now += 1050;
      await queue.admit();
      return (await queue.controls()).admitRatePerSecond;
    };
    try {
      expect(await rateAfter(409)).toBe(10);
      fail = () => {
        throw new Error('database down');
      };
      expect(await rateAfter(500)).toBe(8);
    } finally {
      await close();
    }
  });

  it('releases when a guard that runs after it refuses (the handler never ran)', async () => {
    const refuse = { canActivate: () => Promise.reject(new ForbiddenException()) };
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const token = await admitted(queue, 'alice');
    const ran: unknown[] = [];
    // Listed above RequireEntryToken: applied after it, so it runs after waitgate's guard.
    const Orders = orders((entry) => ran.push(entry), UseGuards(refuse), RequireEntryToken());
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId })], [Orders]);
    try {
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-entry-token': token } });
      expect(response.status).toBe(403);
      expect(ran).toEqual([]);
      await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
      expect(await queue.state('alice')).toBe('READY');
    } finally {
      await close();
    }
  });

  it('runs after an auth guard listed below it, so memberId reads what that guard set', async () => {
    const authenticate = {
      canActivate: (context: ExecutionContext) => {
        const req = context.switchToHttp().getRequest<Request & { user?: { id: string } }>();
        req.user = { id: req.get('x-user') ?? '' };
        return true;
      },
    };
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const token = await admitted(queue, 'alice');
    const Orders = orders((entry) => ({ member: entry?.memberId }), RequireEntryToken(), UseGuards(authenticate));
    const byUser = (req: Request & { user?: { id: string } }) => req.user?.id;
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId: byUser })], [Orders]);
    try {
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-user': 'alice', 'x-entry-token': token } });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ member: 'alice' });
    } finally {
      await close();
    }
  });

  it('reads the token from tokenHeader, and works in a module that imports nothing (WaitgateModule is global)', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const token = await admitted(queue, 'alice');
    const Orders = orders((entry) => ({ tokenId: entry?.tokenId }), RequireEntryToken({ tokenHeader: 'X-Pass' }));
    class OrdersModule {}
    Module({ controllers: [Orders] })(OrdersModule);
    const { url, close } = await listen(new ExpressAdapter(), [WaitgateModule.forRoot({ queue, memberId }), OrdersModule], []);
    try {
      const response = await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-member': 'alice', 'x-pass': token } });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ tokenId: expect.any(String) });
      await expect.poll(() => queue.state('alice')).toBe('NOT_ENTERED');
    } finally {
      await close();
    }
  });
});
