// waitgate/nestjs: the session guard of signed passes (applied by `@RequireEntryPass()`), and the pass it hands to the handler.

import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { parsePassGuard, type EntryPass, type PassGuard, type RequireEntryPassOptions } from '../entry-pass.js';
import { guardContext } from './guard.js';
import { WAITGATE_CONFIG, type PlatformRequest, type WaitgateModuleConfig } from './options.js';
import { requestToken } from '../pass-cookie.js';

/** Options of `@RequireEntryPass()`: those of every adapter's `requireEntryPass`, the member coming from `WaitgateModule.forRoot`. */
export type NestRequireEntryPassOptions = Omit<RequireEntryPassOptions<unknown>, 'memberId'>;

/** The route's settings, put on the handler by `@RequireEntryPass()`. */
export const PassRouteOptions = Reflector.createDecorator<NestRequireEntryPassOptions>();

const passes = new WeakMap<object, EntryPass>();

/** The pass the guard admitted for this request. */
export function passOf(request: object): EntryPass | undefined {
  return passes.get(request);
}

/**
 * Admits a request carrying the member's valid signed pass, without claiming it; refuses with a
 * {@link WaitgateHttpException} (401; 503 with `checkRevoked` when the store is down).
 */
export class WaitgatePassGuard implements CanActivate {
  readonly #guards = new WeakMap<object, PassGuard<PlatformRequest>>();

  constructor(
    protected readonly config: WaitgateModuleConfig,
    protected readonly reflector: Reflector,
    protected readonly adapterHost: HttpAdapterHost,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { request, refuse } = guardContext(context, this.adapterHost);
    const guard = this.#guardOf(context);
    const outcome = await guard.check(await guard.memberId(request), requestToken(request, guard.tokenHeader));
    if (outcome.kind === 'respond') return refuse(outcome.result);
    passes.set(request, outcome.pass);
    return true;
  }

  /** One pass guard per route, made at its first request (the queue comes from the module). */
  #guardOf(context: ExecutionContext): PassGuard<PlatformRequest> {
    const handler = context.getHandler();
    let guard = this.#guards.get(handler);
    if (!guard) {
      const options = this.reflector.get(PassRouteOptions, handler) ?? {};
      guard = parsePassGuard<PlatformRequest>(this.config.queue, { ...options, memberId: this.config.memberId });
      this.#guards.set(handler, guard);
    }
    return guard;
  }
}
Injectable()(WaitgatePassGuard);
Inject(WAITGATE_CONFIG)(WaitgatePassGuard, undefined, 0);
Inject(Reflector)(WaitgatePassGuard, undefined, 1);
Inject(HttpAdapterHost)(WaitgatePassGuard, undefined, 2);
