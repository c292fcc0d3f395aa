// One behaviour table, run against every HTTP adapter: over real HTTP, or in process for the
// Web-standard adapters (a `Request` in, a `Response` out). Each adapter test builds the same
// small app (see AppFactory) and calls describeAdapter.

import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { MemoryStore, QueueStateLostError, WaitingQueue, type Position, type Store } from '../../src/index.js';
import type { Entry, Gate, IdentityResolver } from '../../src/http/core.js';
import { storeWith } from '../support/store-with.js';

/**
 * The app every adapter test builds:
 * - queue routes under `/queue`, the member taken from the `x-member` header (absent -> none);
 * - `POST /orders` behind the guard; its handler records each call, then, following headers:
 *   `x-test-delay` ms to wait, `x-test-throw` to throw, `x-test-settle: consume|release|release-not-failed`
 *   (manual mode) to settle before answering (the last: `release({ failed: false })`), `x-test-status` for the status (default 201). It answers
 *   `{ tokenId, settled }` (tokenId null when no entry).
 */
export interface AppSetup {
  queue: WaitingQueue;
  settle: 'auto' | 'manual';
  onStoreUnavailable?: 'fail-closed' | 'fail-open';
  /** Called by the order handler with the entry it saw. */
  onOrder(entry: Entry | undefined): void;
  /** Extra queue-route options (the gate's and the identity's: gate-suite.ts), spread into the routes' options. */
  routes?: { gate?: Gate<unknown>; shadowSecret?: string; maxStreams?: number; identity?: IdentityResolver<unknown> };
}

/**
 * A started app, reached over real HTTP (`url`: the server's base URL) or in process (`request`:
 * answers a Web `Request`, as Hono's `app.request` or a fetch handler do; its URL's origin is
 * `http://waitgate.test`).
 */
export type AppHandle = { close(): Promise<void> } & ({ url: string } | { request(request: Request): Promise<Response> });

export type AppFactory = (setup: AppSetup) => Promise<AppHandle>;

/** The order handler's behaviour, shared by the three apps so they differ only in framework glue. */
export async function orderBehaviour(headers: Record<string, string | string[] | undefined>, entry: Entry | undefined) {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const delay = Number(header('x-test-delay') ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  if (header('x-test-throw')) throw new Error('handler failed');
  const how = header('x-test-settle');
  const settled =
    how === 'consume'
      ? await entry?.consume()
      : how === 'release'
        ? await entry?.release()
        : how === 'release-not-failed'
          ? await entry?.release({ failed: false })
          : null;
  return { status: Number(header('x-test-status') ?? 201), body: { tokenId: entry?.tokenId ?? null, settled: settled ?? null } };
}

export const memberOf = (headers: Record<string, string | string[] | undefined>) => {
  const v = headers['x-member'];
  return Array.isArray(v) ? v[0] : v;
};

/** The headers of a Web Request as the record orderBehaviour and memberOf read. */
export const headersOf = (headers: Headers): Record<string, string> => Object.fromEntries(headers.entries());

/** Sends one request to a started app, through whichever transport it offers. */
function send(app: AppHandle, path: string, init: RequestInit): Promise<Response> {
  return 'url' in app ? fetch(app.url + path, init) : app.request(new Request(`http://waitgate.test${path}`, init));
}

/** A store that never answers: the queue's operationTimeoutMs turns every call into StoreUnavailableError. */
const deadStore: Store = new Proxy({} as Store, { get: () => () => new Promise(() => undefined) });

export function describeAdapter(name: string, startApp: AppFactory): void {
  async function setup(
    options: {
      settle?: 'auto' | 'manual';
      store?: Store;
      onStoreUnavailable?: 'fail-closed' | 'fail-open';
      claimTtlSeconds?: number;
      /** Adaptive admission from 10/s, where only failures move the rate (x0.8 when over 10%). */
      adaptive?: boolean;
      /** A `vip` lane for invite codes. */
      lanes?: boolean;
    } = {},
  ) {
    let now = Date.now();
    const store = options.store ?? new MemoryStore({ now: () => now });
    const admission = options.adaptive ? ({ mode: 'adaptive', targetLatencyMs: 600_000, minRatePerSecond: 1, maxRatePerSecond: 10 } as const) : undefined;
    const queue = new WaitingQueue({
      store,
      operationTimeoutMs: 100,
      claimTtlSeconds: options.claimTtlSeconds ?? 30,
      ...(admission ? { admission, admitRatePerSecond: 10, admitBurst: 20 } : {}),
      ...(options.lanes ? { lanes: [{ name: 'vip', share: 0.5 }] } : {}),
    });
    const orders: Array<Entry | undefined> = [];
    const app = await startApp({ queue, settle: options.settle ?? 'auto', onStoreUnavailable: options.onStoreUnavailable, onOrder: (e) => orders.push(e) });
    const call = (method: string, path: string, headers: Record<string, string> | Headers = {}, body?: string) => {
      const sent = new Headers(headers);
      if (body) sent.set('content-type', 'application/json');
      return send(app, path, { method, headers: sent, body });
    };
    const admittedToken = async (member: string) => {
      await queue.enter(member);
      const admission = (await queue.admit()).find((a) => a.memberId === member);
      return admission!.entryToken;
    };
    const order = (member: string, token: string | undefined, extra: Record<string, string> = {}) =>
      call('POST', '/orders', { 'x-member': member, ...(token === undefined ? {} : { 'x-entry-token': token }), ...extra });
    /** The rate adaptive admission sets from the orders settled so far: 10 as long as no failure counted, 8 after one. */
    const rateAfterOrders = async () => {
      await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
      now += 1050; // the law's next evaluation
      await queue.admit();
      return (await queue.controls()).admitRatePerSecond;
    };
    return { queue, app, call, order, orders, admittedToken, rateAfterOrders, advance: (ms: number) => void (now += ms) };
  }

  async function expectError(response: Response, status: number, code: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(typeof body.error.message).toBe('string');
  }

  describe(`HTTP adapter: ${name}`, () => {
    describe('queue routes', () => {
      it('POST /enter answers 200 with the position, no-store, and Retry-After = pollingIntervalSeconds while WAITING', async () => {
        const { app, call } = await setup();
        try {
          const response = await call('POST', '/queue/enter', { 'x-member': 'alice' });
          expect(response.status).toBe(200);
          expect(response.headers.get('cache-control')).toBe('no-store');
          const position = (await response.json()) as Position;
          expect(position).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 1, entryToken: null });
          expect(response.headers.get('retry-after')).toBe(String(position.pollingIntervalSeconds));
        } finally {
          await app.close();
        }
      });

      it('POST /enter with { "code" } in its body joins the code\'s lane; an unknown or spent code is 403 CODE_INVALID', async () => {
        const { app, call, queue } = await setup({ lanes: true });
        try {
          await queue.addCodes('vip', ['VIP-1']);
          await call('POST', '/queue/enter', { 'x-member': 'alice' });
          const vip = await call('POST', '/queue/enter', { 'x-member': 'bob' }, JSON.stringify({ code: 'VIP-1' }));
          expect(vip.status).toBe(200);
          expect(await vip.json()).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 2 });
          expect((await queue.stats()).lanes).toMatchObject([{ waiting: 1 }, { name: 'vip', waiting: 1, codeUsesLeft: 0 }]);
          await expectError(await call('POST', '/queue/enter', { 'x-member': 'carol' }, JSON.stringify({ code: 'VIP-1' })), 403, 'CODE_INVALID');
          await expectError(await call('POST', '/queue/enter', { 'x-member': 'dan' }, JSON.stringify({ code: 42 })), 403, 'CODE_INVALID');
          expect((await queue.position('carol')).status).toBe('NOT_ENTERED');
          // Bob reloads the page: the same body again keeps his place and spends nothing.
          expect(await (await call('POST', '/queue/enter', { 'x-member': 'bob' }, JSON.stringify({ code: 'VIP-1' }))).json()).toMatchObject({ rank: 0 });
        } finally {
          await app.close();
        }
      });

      it('GET /position answers the same position; READY carries the token and no Retry-After', async () => {
        const { app, call, queue } = await setup();
        try {
          await call('POST', '/queue/enter', { 'x-member': 'alice' });
          await call('POST', '/queue/enter', { 'x-member': 'bob' });
          const bob = await call('GET', '/queue/position', { 'x-member': 'bob' });
          expect(await bob.json()).toMatchObject({ status: 'WAITING', rank: 1 });
          const [admission] = await queue.admit();
          const alice = await call('GET', '/queue/position', { 'x-member': 'alice' });
          expect(alice.status).toBe(200);
          expect(alice.headers.get('retry-after')).toBeNull();
          expect(await alice.json()).toMatchObject({ status: 'READY', entryToken: admission!.entryToken });
        } finally {
          await app.close();
        }
      });

      it('DELETE answers 204 and the member is gone', async () => {
        const { app, call } = await setup();
        try {
          await call('POST', '/queue/enter', { 'x-member': 'alice' });
          const response = await call('DELETE', '/queue', { 'x-member': 'alice' });
          expect(response.status).toBe(204);
          expect(await response.text()).toBe('');
          expect(await (await call('GET', '/queue/position', { 'x-member': 'alice' })).json()).toMatchObject({ status: 'NOT_ENTERED' });
        } finally {
          await app.close();
        }
      });

      it('answers 401 without a member and 400 for a bad member id, on every route', async () => {
        const { app, call, queue, orders, admittedToken } = await setup();
        try {
          for (const [method, path] of [
            ['POST', '/queue/enter'],
            ['GET', '/queue/position'],
            ['DELETE', '/queue'],
            ['POST', '/orders'],
          ] as const) {
            await expectError(await call(method, path), 401, 'UNAUTHENTICATED');
            await expectError(await call(method, path, { 'x-member': 'x'.repeat(129), 'x-entry-token': 'a'.repeat(43) }), 400, 'INVALID_MEMBER_ID');
          }
          expect(await queue.stats()).toMatchObject({ waiting: 0, active: 0 }); // nobody entered
          // The guard asks for the member before the token: without one it answers UNAUTHENTICATED whatever the
          // token (not ENTRY_TOKEN_MISSING / ENTRY_TOKEN_INVALID), and a live token sent along is not claimed.
          const token = await admittedToken('alice');
          for (const sent of [undefined, 'not a token', 'A'.repeat(43), token]) {
            await expectError(await call('POST', '/orders', sent === undefined ? {} : { 'x-entry-token': sent }), 401, 'UNAUTHENTICATED');
          }
          expect(orders).toEqual([]);
          expect(await queue.stats()).toMatchObject({ active: 1, claimed: 0 });
        } finally {
          await app.close();
        }
      });

      it('ignores a body where none is expected', async () => {
        const { app, call } = await setup();
        try {
          const response = await call('POST', '/queue/enter', { 'x-member': 'alice' }, JSON.stringify({ memberId: 'mallory', junk: 'x'.repeat(1000) }));
          expect(await response.json()).toMatchObject({ status: 'WAITING', rank: 0 });
        } finally {
          await app.close();
        }
      });

      it('answers 503 with Retry-After when the store is down', async () => {
        const { app, call } = await setup({ store: deadStore });
        try {
          for (const [method, path] of [
            ['POST', '/queue/enter'],
            ['GET', '/queue/position'],
            ['DELETE', '/queue'],
          ] as const) {
            const response = await call(method, path, { 'x-member': 'alice' });
            expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
            await expectError(response, 503, 'STORE_UNAVAILABLE');
          }
        } finally {
          await app.close();
        }
      });
    });

    describe('order guard', () => {
      it('answers 401 ENTRY_TOKEN_MISSING without a token, and the handler is not called', async () => {
        const { app, order, orders } = await setup();
        try {
          await expectError(await order('alice', undefined), 401, 'ENTRY_TOKEN_MISSING');
          await expectError(await order('alice', ''), 401, 'ENTRY_TOKEN_MISSING');
          expect(orders).toEqual([]);
        } finally {
          await app.close();
        }
      });

      it("answers 401 ENTRY_TOKEN_INVALID for a wrong, another member's, a repeated, or an expired token", async () => {
        const { app, call, order, orders, admittedToken, advance } = await setup();
        try {
          const token = await admittedToken('alice');
          await expectError(await order('alice', 'A'.repeat(43)), 401, 'ENTRY_TOKEN_INVALID');
          await expectError(await order('alice', 'not a token at all'), 401, 'ENTRY_TOKEN_INVALID');
          await expectError(await order('bob', token), 401, 'ENTRY_TOKEN_INVALID');
          const twice = new Headers({ 'x-member': 'alice' });
          twice.append('x-entry-token', token);
          twice.append('x-entry-token', token);
          await expectError(await call('POST', '/orders', twice), 401, 'ENTRY_TOKEN_INVALID');
          advance(301_000);
          await expectError(await order('alice', token), 401, 'ENTRY_TOKEN_INVALID');
          expect(orders).toEqual([]);
        } finally {
          await app.close();
        }
      });

      it('answers 409 ENTRY_TOKEN_IN_USE to a concurrent second use', async () => {
        const { app, order, orders, admittedToken } = await setup();
        try {
          const token = await admittedToken('alice');
          const first = order('alice', token, { 'x-test-delay': '300' });
          await new Promise((r) => setTimeout(r, 100));
          await expectError(await order('alice', token), 409, 'ENTRY_TOKEN_IN_USE');
          expect((await first).status).toBe(201);
          expect(orders).toHaveLength(1);
        } finally {
          await app.close();
        }
      });

      it('answers 503 with Retry-After when the store is down, and never calls the handler', async () => {
        const { app, order, orders } = await setup({ store: deadStore });
        try {
          const response = await order('alice', 'A'.repeat(43));
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
          await expectError(response, 503, 'STORE_UNAVAILABLE');
          expect(orders).toEqual([]);
        } finally {
          await app.close();
        }
      });

      it("lets the request through without an entry when the user chose onStoreUnavailable: 'fail-open'", async () => {
        const { app, order, orders } = await setup({ store: deadStore, onStoreUnavailable: 'fail-open' });
        try {
          const response = await order('alice', 'A'.repeat(43));
          expect(response.status).toBe(201);
          expect(await response.json()).toEqual({ tokenId: null, settled: null });
          expect(orders).toEqual([undefined]);
        } finally {
          await app.close();
        }
      });
    });

    describe("settle: 'auto'", () => {
      it('consumes on a 2xx: the token is then invalid', async () => {
        const { app, order, orders, admittedToken, queue } = await setup();
        try {
          const token = await admittedToken('alice');
          const response = await order('alice', token);
          expect(response.status).toBe(201);
          expect((await response.json()) as { tokenId: string }).toMatchObject({ tokenId: orders[0]!.tokenId });
          await expect.poll(() => queue.state('alice')).toBe('NOT_ENTERED');
          await expectError(await order('alice', token), 401, 'ENTRY_TOKEN_INVALID');
        } finally {
          await app.close();
        }
      });

      it.each([
        ['a 4xx', { 'x-test-status': '409' }, 409],
        ['a 5xx', { 'x-test-status': '503' }, 503],
        ['a thrown handler', { 'x-test-throw': '1' }, 500],
      ])('releases on %s: the same token works again', async (_label, headers, status) => {
        const { app, order, admittedToken, queue } = await setup();
        try {
          const token = await admittedToken('alice');
          expect((await order('alice', token, headers)).status).toBe(status);
          await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
          expect((await order('alice', token)).status).toBe(201);
        } finally {
          await app.close();
        }
      });

      it.each([
        ['a 400 (validation)', { 'x-test-status': '400' }, 400, 10],
        ['a 409 (out of stock)', { 'x-test-status': '409' }, 409, 10],
        ['a 402 (payment declined)', { 'x-test-status': '402' }, 402, 10],
        ['a 503', { 'x-test-status': '503' }, 503, 8],
        ['a thrown handler', { 'x-test-throw': '1' }, 500, 8],
      ])('adaptive admission: %s releases the claim; only a failed order path counts as a failed order', async (_label, headers, status, rate) => {
        const { app, order, admittedToken, rateAfterOrders } = await setup({ adaptive: true });
        try {
          const token = await admittedToken('alice');
          expect((await order('alice', token, headers)).status).toBe(status);
          // 10: not counted at all (neither lowered nor raised); 8: one failed order of one, x0.8.
          expect(await rateAfterOrders()).toBe(rate);
        } finally {
          await app.close();
        }
      });

      it('adaptive admission: one shopper answered 400 again and again counts nothing; failing again and again counts once', async () => {
        const { app, order, admittedToken, rateAfterOrders } = await setup({ adaptive: true });
        try {
          // Each answer releases the claim once sent: poll past a 409 IN_USE until the release landed.
          const alice = await admittedToken('alice');
          for (let i = 0; i < 20; i++) await expect.poll(async () => (await order('alice', alice, { 'x-test-status': '400' })).status).toBe(400);
          expect(await rateAfterOrders()).toBe(10);
          const bob = await admittedToken('bob');
          for (let i = 0; i < 10; i++) await expect.poll(async () => (await order('bob', bob, { 'x-test-status': '500' })).status).toBe(500);
          for (let i = 0; i < 10; i++) {
            const response = await order(`c${i}`, await admittedToken(`c${i}`));
            expect(response.status).toBe(201);
            await response.text(); // read to its end: sent, so consumed
          }
          // bob's ten failures count once: 1 of 11 orders (9%), healthy (10, the maximum). Counted ten times: x0.8.
          expect(await rateAfterOrders()).toBe(10);
        } finally {
          await app.close();
        }
      });

      it('releases when the client hangs up mid-handler', async () => {
        const { app, admittedToken, queue, orders, rateAfterOrders } = await setup({ adaptive: true });
        try {
          const token = await admittedToken('alice');
          const headers = { 'x-member': 'alice', 'x-entry-token': token, 'x-test-delay': '2000' };
          if ('url' in app) {
            await new Promise<void>((resolve) => {
              const req = httpRequest(`${app.url}/orders`, { method: 'POST', headers });
              req.on('error', () => resolve());
              req.end();
              const check = setInterval(() => {
                if (orders.length === 0) return; // wait until the handler holds the claim
                clearInterval(check);
                req.destroy();
              }, 10);
            });
          } else {
            // In process, a hang-up is the request's signal aborting (as runtimes do on a closed connection).
            const hangUp = new AbortController();
            void app.request(new Request('http://waitgate.test/orders', { method: 'POST', headers, signal: hangUp.signal })).catch(() => undefined);
            await expect.poll(() => orders.length).toBe(1); // the handler holds the claim
            hangUp.abort();
          }
          await expect.poll(async () => (await queue.stats()).claimed, { timeout: 1500 }).toBe(0);
          expect(await rateAfterOrders()).toBe(8); // a dropped connection is a failed order
          const claim = await queue.claim('alice', token);
          expect(claim.memberId).toBe('alice');
        } finally {
          await app.close();
        }
      });
    });

    describe("settle: 'manual'", () => {
      it('settles nothing unless the handler does: the token stays claimed', async () => {
        const { app, order, admittedToken, queue } = await setup({ settle: 'manual' });
        try {
          const token = await admittedToken('alice');
          expect((await order('alice', token)).status).toBe(201);
          await new Promise((r) => setTimeout(r, 50));
          expect((await queue.stats()).claimed).toBe(1);
          await expectError(await order('alice', token), 409, 'ENTRY_TOKEN_IN_USE');
        } finally {
          await app.close();
        }
      });

      it('consumes when the handler calls entry.consume(), whatever the status', async () => {
        const { app, order, admittedToken, queue } = await setup({ settle: 'manual' });
        try {
          const token = await admittedToken('alice');
          const response = await order('alice', token, { 'x-test-settle': 'consume', 'x-test-status': '500' });
          expect(await response.json()).toMatchObject({ settled: true });
          expect(await queue.state('alice')).toBe('NOT_ENTERED');
        } finally {
          await app.close();
        }
      });

      it('adaptive admission: entry.release() counts a failed order, entry.release({ failed: false }) does not', async () => {
        const { app, order, admittedToken, rateAfterOrders } = await setup({ settle: 'manual', adaptive: true });
        try {
          const token = await admittedToken('alice');
          expect(await (await order('alice', token, { 'x-test-settle': 'release-not-failed', 'x-test-status': '400' })).json()).toMatchObject({
            settled: true,
          });
          expect(await rateAfterOrders()).toBe(10);
          expect(await (await order('alice', token, { 'x-test-settle': 'release', 'x-test-status': '500' })).json()).toMatchObject({ settled: true });
          expect(await rateAfterOrders()).toBe(8);
        } finally {
          await app.close();
        }
      });

      it('releases when the handler calls entry.release(), even on a 2xx', async () => {
        const { app, order, admittedToken, queue } = await setup({ settle: 'manual' });
        try {
          const token = await admittedToken('alice');
          const response = await order('alice', token, { 'x-test-settle': 'release' });
          expect(await response.json()).toMatchObject({ settled: true });
          expect((await queue.stats()).claimed).toBe(0);
          expect(await queue.state('alice')).toBe('READY');
        } finally {
          await app.close();
        }
      });
    });

    describe('first-hour answers', () => {
      it('answers 409 ENTRY_TOKEN_IN_USE with Retry-After: the seconds left of the other lease', async () => {
        const { app, order, admittedToken } = await setup({ claimTtlSeconds: 20 });
        try {
          const token = await admittedToken('alice');
          const first = order('alice', token, { 'x-test-delay': '300' });
          await new Promise((r) => setTimeout(r, 100));
          const second = await order('alice', token);
          expect(second.headers.get('retry-after')).toBe('20');
          const body = (await second.clone().json()) as { error: { message: string } };
          expect(body.error.message).toMatch(/earlier one of yours that timed out/);
          await expectError(second, 409, 'ENTRY_TOKEN_IN_USE');
          await first;
        } finally {
          await app.close();
        }
      });

      it('answers 503 QUEUE_STATE_LOST, without Retry-After, when the queue state was lost', async () => {
        const lost: Store = new Proxy({} as Store, { get: () => () => Promise.reject(new QueueStateLostError('default')) });
        const { app, call, order } = await setup({ store: lost });
        try {
          for (const response of [await call('POST', '/queue/enter', { 'x-member': 'alice' }), await order('alice', 'A'.repeat(43))]) {
            expect(response.headers.get('retry-after')).toBeNull();
            await expectError(response, 503, 'QUEUE_STATE_LOST');
          }
        } finally {
          await app.close();
        }
      });

      it('retries a consume that met a store failure in the background, and the entry tells it apart from a refusal', async () => {
        const memory = new MemoryStore();
        let failures = 2;
        const flaky = storeWith(memory, {
          consume: (...args: Parameters<Store['consume']>) => (failures-- > 0 ? Promise.reject(new Error('connection reset')) : memory.consume(...args)),
        });
        const { app, order, orders, admittedToken, queue } = await setup({ store: flaky, settle: 'manual' });
        try {
          const token = await admittedToken('alice');
          const response = await order('alice', token, { 'x-test-settle': 'consume' });
          expect(response.status).toBe(201); // the order committed: settling never fails it
          expect(await response.json()).toMatchObject({ settled: false });
          const entry = orders[0]!;
          expect(entry.state).toBe('retrying');
          expect(await entry.outcome()).toBe('confirmed');
          expect(entry.state).toBe('confirmed');
          expect(await queue.state('alice')).toBe('NOT_ENTERED'); // consumed for good
        } finally {
          await app.close();
        }
      });

      it('answers 403 QUEUE_CLOSED with the operator message to a new member of a closed queue; members inside read the mode', async () => {
        const { app, call, queue } = await setup();
        try {
          await call('POST', '/queue/enter', { 'x-member': 'alice' });
          await queue.setControls({ mode: 'closed', message: 'Sold out, thank you!' });
          const refused = await call('POST', '/queue/enter', { 'x-member': 'bob' });
          const body = (await refused.clone().json()) as { error: { message: string } };
          expect(body.error.message).toBe('Sold out, thank you!');
          await expectError(refused, 403, 'QUEUE_CLOSED');
          const alice = await call('GET', '/queue/position', { 'x-member': 'alice' });
          expect(await alice.json()).toMatchObject({ status: 'WAITING', rank: 0, queueMode: 'closed', message: 'Sold out, thank you!', opensAt: null });
        } finally {
          await app.close();
        }
      });

      it('tells a refused consume from one not known yet', async () => {
        const { app, order, orders, admittedToken, queue } = await setup({ settle: 'manual' });
        try {
          const token = await admittedToken('alice');
          await queue.leave('alice'); // the token is dropped before the handler consumes
          const refused = await order('alice', token);
          expect(refused.status).toBe(401);
          const token2 = await admittedToken('bob');
          const response = await order('bob', token2, { 'x-test-settle': 'release' });
          expect(await response.json()).toMatchObject({ settled: true });
          const entry = orders[0]!;
          expect(await entry.consume()).toBe(false); // release came first
          expect(await entry.outcome()).toBe('confirmed'); // the outcome of the first settle, the release
        } finally {
          await app.close();
        }
      });
    });
  });
}
