// waitgate/hono against the shared behaviour table, through app.request() and over real HTTP
// (@hono/node-server), then what is Hono's own: onError, other middleware's headers, c.var.

import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { queueRoutes, requireEntryToken } from '../../src/http/hono.js';
import { serveFetch } from '../support/serve-fetch.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';
import { describeAdapter, headersOf, memberOf, orderBehaviour, type AppSetup } from './adapter-suite.js';

/** The suite's app: the queue routes mounted at /queue, the guarded POST /orders. */
function honoApp({ queue, settle, onStoreUnavailable, onOrder, routes }: AppSetup): Hono {
  const app = new Hono();
  const memberId = (c: Context) => memberOf(headersOf(c.req.raw.headers));
  app.route('/queue', queueRoutes(queue, { memberId, ...routes }));
  app.post('/orders', requireEntryToken(queue, { memberId, settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) }), async (c) => {
    const entry = c.get('entry');
    onOrder(entry);
    const { status, body } = await orderBehaviour(headersOf(c.req.raw.headers), entry);
    return c.json(body, status as ContentfulStatusCode);
  });
  app.onError((_error, c) => c.json({ error: 'handler failed' }, 500));
  return app;
}

describeAdapter('hono (app.request)', async (setup) => {
  const app = honoApp(setup);
  return { request: async (request) => app.request(request), close: async () => undefined };
});
describeAdapter('hono (over HTTP)', async (setup) => serveFetch(honoApp(setup).fetch));
describeGate('hono (over HTTP)', async (setup) => serveFetch(honoApp(setup).fetch));
describeEventStream('hono (over HTTP)', async (setup) => serveFetch(honoApp(setup).fetch));

describe('hono: in the app', () => {
  type AppEnv = { Variables: { user?: { id: string } } };

  async function shop(onError?: (c: Context) => Response) {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const app = new Hono<AppEnv>();
    app.use(async (c, next) => {
      const id = c.req.header('x-member-id');
      if (id) c.set('user', { id });
      await next();
    });
    const memberId = (c: Context<AppEnv>) => c.get('user')?.id;
    app.route('/shop/queue', queueRoutes(queue, { memberId }));
    app.post(
      '/shop/orders',
      requireEntryToken(queue, { memberId }),
      async (c, next) => {
        await next();
        c.header('x-inner', 'set after the handler'); // a middleware between the guard and the handler
      },
      async (c) => {
        if (c.req.query('fail')) throw new Error('db down');
        return c.json({ tokenId: c.var.entry.tokenId, member: c.get('user')?.id }, 201);
      },
    );
    if (onError) app.onError((_error, c) => onError(c));
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const order = (query = '') =>
      app.request(`/shop/orders${query}`, { method: 'POST', headers: { 'x-member-id': 'alice', 'x-entry-token': admission!.entryToken } });
    return { app, queue, order };
  }

  it('mounts the routes with app.route(); memberId reads what earlier middleware set on the Context', async () => {
    const { app } = await shop();
    const position = await app.request('/shop/queue/position', { headers: { 'x-member-id': 'alice' } });
    expect(await position.json()).toMatchObject({ status: 'READY' });
    expect((await app.request('/shop/queue/position')).status).toBe(401);
    expect((await app.request('/shop/queue', { method: 'DELETE', headers: { 'x-member-id': 'alice' } })).status).toBe(204);
  });

  it('hands the handler a typed entry and keeps the headers other middleware set on the response', async () => {
    const { order, queue } = await shop();
    const response = await order();
    expect(response.status).toBe(201);
    expect(response.headers.get('x-inner')).toBe('set after the handler');
    expect(await response.json()).toEqual({ tokenId: expect.any(String), member: 'alice' });
    await expect.poll(() => queue.state('alice')).toBe('NOT_ENTERED');
  });

  it('releases a thrown handler even when onError answers it with a 2xx', async () => {
    const { order, queue } = await shop((c) => c.json({ queued: 'for later' }, 202));
    expect((await order('?fail=1')).status).toBe(202);
    await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
    expect(await queue.state('alice')).toBe('READY');
  });
});
