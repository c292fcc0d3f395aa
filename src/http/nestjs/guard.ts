// waitgate/nestjs: the order-route guard (claims the token), the interceptor (releases it when the handler throws)
// and the entry they hand to the handler. Nest's decorators are applied as calls: see the note in ../nestjs.ts.

import type { ServerResponse } from 'node:http';
import { HttpException, Inject, Injectable, type CallHandler, type CanActivate, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { tap, type Observable } from 'rxjs';
import { runGuard, settleEnded, settleWhenFinished, type Entry, type HttpErrorResponse } from '../core.js';
import { WAITGATE_CONFIG, parseRouteOptions, type PlatformRequest, type RouteConfig, type WaitgateModuleConfig } from './options.js';
import { requestToken } from '../pass-cookie.js';

/** The route's settings, put on the handler by `@RequireEntryToken()`. */
export const RouteOptions = Reflector.createDecorator<RouteConfig>();
const DEFAULT_ROUTE = parseRouteOptions();

function routeConfig(reflector: Reflector, context: ExecutionContext): RouteConfig {
  return reflector.get(RouteOptions, context.getHandler()) ?? DEFAULT_ROUTE;
}

// The entry of each guarded request. A WeakMap rather than a property, so the
// platform's request object keeps its shape (Fastify asks for that).
const entries = new WeakMap<object, Entry>();

/** The entry the guard claimed for this request; undefined if it let the request through without one (fail-open). */
export function entryOf(request: object): Entry | undefined {
  return entries.get(request);
}

/** Express's response is Node's ServerResponse; Fastify's reply carries it as `raw`. */
function rawResponse(response: unknown): ServerResponse {
  const raw = (response as { raw?: ServerResponse }).raw;
  return raw !== undefined && typeof raw.once === 'function' ? raw : (response as ServerResponse);
}

/**
 * A refusal of the guard: status, body `{ error: { code, message } }` and headers of the
 * HTTP API, as in every adapter. An `HttpException`, so Nest's exception handling answers
 * it (the default filter sends the body as it is; its headers are already set on the
 * response). Your own filters can recognise it and answer `getResponse()`.
 */
export class WaitgateHttpException extends HttpException {
  /** The headers of the answer (lower case): `cache-control`, and `retry-after` on 409 IN_USE and 503. */
  readonly headers: Record<string, string>;

  constructor(answer: HttpErrorResponse) {
    super(answer.body, answer.status);
    this.headers = answer.headers;
    this.message = answer.body.error.message;
  }
}

/**
 * The opening of every waitgate guard: the HTTP request (other contexts are refused), and
 * `refuse`, which sets a refusal's headers on the platform's response and throws it as a
 * {@link WaitgateHttpException}.
 */
export function guardContext(context: ExecutionContext, adapterHost: HttpAdapterHost): { http: ReturnType<ExecutionContext['switchToHttp']>; request: PlatformRequest; refuse(result: unknown): never } {
  if (context.getType() !== 'http') throw new Error(`waitgate guards HTTP routes only, not ${context.getType()} handlers`);
  const http = context.switchToHttp();
  const refuse = (result: unknown): never => {
    const answer = result as HttpErrorResponse;
    const response = http.getResponse<unknown>();
    for (const [name, value] of Object.entries(answer.headers)) adapterHost.httpAdapter.setHeader(response, name, value);
    throw new WaitgateHttpException(answer);
  };
  return { http, request: http.getRequest<PlatformRequest>(), refuse };
}

/**
 * Guards an order route (applied by `@RequireEntryToken()`): claims the member's
 * `X-Entry-Token`; refuses with a {@link WaitgateHttpException} (401, 409, 503) or lets the
 * request through with the entry, which `@Entry()` hands to the handler. With
 * `settle: 'auto'` the claim is consumed once the response finished with a 2xx status
 * and released otherwise, including a client that hung up or a later guard that refused.
 */
export class WaitgateGuard implements CanActivate {
  constructor(
    protected readonly config: WaitgateModuleConfig,
    protected readonly reflector: Reflector,
    protected readonly adapterHost: HttpAdapterHost,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { http, request, refuse } = guardContext(context, this.adapterHost);
    const route = routeConfig(this.reflector, context);
    const { queue, memberId } = this.config;
    const outcome = await runGuard(queue, { ...route, memberId }, await memberId(request), requestToken(request, route.tokenHeader));
    if (outcome.kind === 'respond') return refuse(outcome.result);
    if (outcome.kind === 'entry') {
      entries.set(request, outcome.entry);
      if (route.settle === 'auto') settleWhenFinished(rawResponse(http.getResponse<unknown>()), outcome.entry);
    }
    return true;
  }
}
Injectable()(WaitgateGuard);
Inject(WAITGATE_CONFIG)(WaitgateGuard, undefined, 0);
Inject(Reflector)(WaitgateGuard, undefined, 1);
Inject(HttpAdapterHost)(WaitgateGuard, undefined, 2);

/**
 * Settles after the handler (applied by `@RequireEntryToken()`): with `settle: 'auto'`,
 * a handler that throws releases the claim at once, before any exception filter answers;
 * so the release wins even if a filter of yours answers that exception with a 2xx. It
 * counts as a failed order unless the exception declares a 4xx (`BadRequestException`,
 * `ConflictException`, any `HttpException` below 500: an answer, not a failure). A
 * handler that returns is settled by the status its response finishes with (see
 * {@link WaitgateGuard}). With `settle: 'manual'` it does nothing.
 */
export class WaitgateInterceptor implements NestInterceptor {
  constructor(protected readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const entry = context.getType() === 'http' ? entryOf(context.switchToHttp().getRequest<object>()) : undefined;
    if (entry === undefined || routeConfig(this.reflector, context).settle !== 'auto') return next.handle();
    return next.handle().pipe(tap({ error: (error: unknown) => settleEnded(entry, { thrown: true, error }) }));
  }
}
Injectable()(WaitgateInterceptor);
Inject(Reflector)(WaitgateInterceptor, undefined, 0);
