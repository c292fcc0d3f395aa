// waitgate/nestjs: WaitgateModule (the queue routes as a controller), @RequireEntryToken() for order routes, and @Entry().
//
// The package is compiled without `experimentalDecorators`, so Nest's decorators are
// applied here as the plain calls TypeScript's decorator emit would make
// (`Injectable()(Cls)`, `Inject(token)(Cls, undefined, index)`, a method decorator with
// its descriptor), and constructor parameters are named with `Inject` instead of the
// `design:paramtypes` metadata this build does not emit. Users' own code decorates as usual.

import { Module, UseGuards, UseInterceptors, applyDecorators, createParamDecorator, type DynamicModule, type ExecutionContext } from '@nestjs/common';
import type { Entry as CoreEntry } from './core.js';
import { RouteOptions, WaitgateGuard, WaitgateInterceptor, entryOf } from './nestjs/guard.js';
import {
  WAITGATE_CONFIG,
  parseModuleOptions,
  parseRouteOptions,
  type NestRequireEntryTokenOptions,
  type PlatformRequest,
  type WaitgateModuleConfig,
  type WaitgateModuleOptions,
} from './nestjs/options.js';
import { createQueueController } from './nestjs/queue-controller.js';
import { PassRouteOptions, WaitgatePassGuard, passOf, type NestRequireEntryPassOptions } from './nestjs/pass-guard.js';
import { parsePassOptions, type EntryPass as CoreEntryPass } from './entry-pass.js';

export type { ErrorBody, HttpErrorCode, IdentityResolver, MemberIdResolver, RoomPageOptions, RoomTexts, SettleOutcome, SettleState } from './core.js';
export { WaitgateGuard, WaitgateHttpException, WaitgateInterceptor } from './nestjs/guard.js';
export { WaitgatePassGuard, type NestRequireEntryPassOptions } from './nestjs/pass-guard.js';
export type { NestRequireEntryTokenOptions, PlatformRequest, WaitgateModuleOptions } from './nestjs/options.js';

/** The claimed entry of an order request, as `@Entry()` hands it to the handler (the same `Entry` as in every adapter). */
export type Entry = CoreEntry;

/**
 * The queue routes and the guard's configuration, for one queue. Global: import it
 * once, in your root module, and `@RequireEntryToken()` works in every module.
 */
export class WaitgateModule {
  /**
   * Registers the queue routes (`POST <routesPrefix>/enter`, `GET <routesPrefix>/position`,
   * `DELETE <routesPrefix>`) and the queue and `memberId` that `@RequireEntryToken()` uses.
   * @example
   * ```ts
   * @Module({ imports: [WaitgateModule.forRoot({ queue, memberId: (req: Request) => req.user?.id })] })
   * export class AppModule {}
   * ```
   * @throws {@link index!WaitgateConfigError} for bad options (an unknown one, a queue that is not a WaitingQueue, a bad prefix).
   */
  static forRoot<Req = PlatformRequest>(options: WaitgateModuleOptions<Req>): DynamicModule {
    return dynamicModule(parseModuleOptions(options));
  }
}
Module({})(WaitgateModule);

// Outside the class: a class that names itself inside its body is emitted by esbuild as
// `class _WaitgateModule`, and Nest would log that name.
function dynamicModule(config: WaitgateModuleConfig): DynamicModule {
  return {
    module: WaitgateModule,
    global: true,
    controllers: [createQueueController(config.routesPrefix, config.room !== null)],
    providers: [{ provide: WAITGATE_CONFIG, useValue: config }],
    exports: [WAITGATE_CONFIG],
  };
}

/**
 * Guards an order route: {@link WaitgateGuard} claims the member's `X-Entry-Token` (or
 * refuses: 401, 409, 503 with waitgate's error body), {@link WaitgateInterceptor} settles
 * after the handler. With `settle: 'auto'` (default) the claim is consumed when the
 * response finishes with a 2xx and released otherwise (a thrown exception releases at
 * once); with `settle: 'manual'` the handler calls `entry.consume()` / `entry.release()`.
 * Decorators apply from the bottom up, so of the guards on one method the lowest listed
 * runs first: write `@RequireEntryToken()` above `@UseGuards(YourAuthGuard)`, or put your
 * auth guard on the controller or the app (those run before a method's guards).
 * @example
 * ```ts
 * @Post()
 * @RequireEntryToken()
 * create(@Entry() entry: Entry) { ... }
 * ```
 * @throws {@link index!WaitgateConfigError} when applied with bad options (at startup).
 */
export function RequireEntryToken(options: NestRequireEntryTokenOptions = {}): MethodDecorator {
  return applyDecorators(RouteOptions(parseRouteOptions(options)), UseGuards(WaitgateGuard), UseInterceptors(WaitgateInterceptor));
}

const entryParam = createParamDecorator((_data: unknown, context: ExecutionContext) => entryOf(context.switchToHttp().getRequest<object>()));

/**
 * The claimed entry of a `@RequireEntryToken()` route, as a handler parameter:
 * `create(@Entry() entry: Entry)`. Undefined only when the guard let the request
 * through without one (`onStoreUnavailable: 'fail-open'`); type it `Entry | undefined` there.
 */
export function Entry(): ParameterDecorator {
  return entryParam();
}

/** The member's valid signed pass, as `@EntryPass()` hands it to the handler (the same `EntryPass` as in every adapter). */
export type EntryPass = CoreEntryPass;

/**
 * Admits a request carrying the member's valid signed pass (the queue needs `signing`), without
 * claiming it: for the pages of a multi-step checkout; the order route keeps `@RequireEntryToken()`.
 * Refuses with 401 (503 with `checkRevoked` when the store is down) and waitgate's error body.
 * @example
 * ```ts
 * @Get('shipping')
 * @RequireEntryPass({ checkRevoked: true })
 * shipping(@EntryPass() pass: EntryPass) { ... }
 * ```
 * @throws {@link index!WaitgateConfigError} when applied with bad options (at startup).
 */
export function RequireEntryPass(options: NestRequireEntryPassOptions = {}): MethodDecorator {
  parsePassOptions({ ...options, memberId: () => undefined });
  return applyDecorators(PassRouteOptions(options), UseGuards(WaitgatePassGuard));
}

const passParam = createParamDecorator((_data: unknown, context: ExecutionContext) => passOf(context.switchToHttp().getRequest<object>()));

/** The admitted pass of a `@RequireEntryPass()` route, as a handler parameter: `shipping(@EntryPass() pass: EntryPass)`. */
export function EntryPass(): ParameterDecorator {
  return passParam();
}
