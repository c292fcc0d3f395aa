// A user of waitgate/nestjs, with real decorators: @Entry() hands the handler the typed Entry,
// and each decorator refuses to compile where it does not belong. Checked against dist/.
import 'reflect-metadata';
import { Controller, Get, Module, Post, UseGuards, type CanActivate } from '@nestjs/common';
import type { Request } from 'express';
import type { FastifyRequest } from 'fastify';
import { MemoryStore, WaitingQueue } from 'waitgate';
import type { Entry as KoaEntry } from 'waitgate/koa';
import { Entry, RequireEntryToken, WaitgateModule, type MemberIdResolver } from 'waitgate/nestjs';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      user?: { id: string };
    }
  }
}

const queue = new WaitingQueue({ store: new MemoryStore() });

// memberId receives the platform's request: annotate it with yours to read your auth.
const onExpress: MemberIdResolver<Request> = (req) => req.user?.id;
WaitgateModule.forRoot({ queue, memberId: onExpress });
WaitgateModule.forRoot({ queue, memberId: (req: Request) => req.user?.id, routesPrefix: 'api/queue' });
WaitgateModule.forRoot({ queue, memberId: (request: FastifyRequest) => request.headers['x-user'] as string | undefined });
WaitgateModule.forRoot({ queue, memberId: (req) => req.headers['x-user'] as string | undefined }); // unannotated: its headers
// @ts-expect-error unannotated, the request is only known to have headers: annotate it with your platform's type
WaitgateModule.forRoot({ queue, memberId: (req) => req.user?.id });
// @ts-expect-error the queue is required
WaitgateModule.forRoot({ memberId: onExpress });
// @ts-expect-error memberId returns a member id
WaitgateModule.forRoot({ queue, memberId: (req: Request) => req.user });

declare const authenticate: CanActivate;

@Controller('orders')
export class OrdersController {
  @Post()
  @RequireEntryToken()
  @UseGuards(authenticate)
  async create(@Entry() entry: Entry): Promise<{ tokenId: string; consumed: boolean }> {
    assert<Equal<Entry, KoaEntry>>(true); // the same Entry as every adapter's
    const consumed: boolean = await entry.consume();
    // @ts-expect-error the entry's tokenId is read-only
    entry.tokenId = 'x';
    return { tokenId: entry.tokenId, consumed };
  }

  @Post('manual')
  @RequireEntryToken({ settle: 'manual', tokenHeader: 'x-pass', onStoreUnavailable: 'fail-open' })
  async manual(@Entry() entry: Entry | undefined): Promise<void> {
    await entry?.release();
  }

  @Post('typo')
  // @ts-expect-error settle is 'auto' | 'manual'
  @RequireEntryToken({ settle: 'sometimes' })
  typo(): void {}

  @Post('member')
  // @ts-expect-error memberId is set once, in WaitgateModule.forRoot
  @RequireEntryToken({ memberId: () => 'a' })
  member(): void {}

  @Get('method')
  // @ts-expect-error Entry() decorates a handler parameter, not a method
  @Entry()
  method(): void {}

  @Get('argument')
  // @ts-expect-error Entry() takes no argument
  argument(@Entry('tokenId') tokenId: string): string {
    return tokenId;
  }
}

// @ts-expect-error RequireEntryToken() decorates a route handler, not a controller
@RequireEntryToken()
@Controller('everything')
export class EverythingController {}

@Module({ imports: [WaitgateModule.forRoot({ queue, memberId: onExpress })], controllers: [OrdersController] })
export class AppModule {}
