// waitgate/fetch against the shared behaviour table, in process (Request in, Response out) and
// over real HTTP (@hono/node-server), then what "finished" means for auto settle on the Web.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue } from '../../src/index.js';
import type { Entry } from '../../src/http/core.js';
import { queueRoutes, withEntryToken } from '../../src/http/fetch.js';
import { serveFetch } from '../support/serve-fetch.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';
import { describeAdapter, headersOf, memberOf, orderBehaviour, type AppSetup } from './adapter-suite.js';

/** The suite's app as one fetch handler: the queue routes under /queue, the guarded POST /orders. */
function fetchApp({ queue, settle, onStoreUnavailable, onOrder, routes: extra }: AppSetup): (request: Request) => Promise<Response> {
  const memberId = (request: Request) => memberOf(headersOf(request.headers));
  const routes = queueRoutes(queue, { memberId, prefix: '/queue', ...extra });
  const order = withEntryToken(queue, { memberId, settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) }, async (request, entry) => {
    onOrder(entry);
    const { status, body } = await orderBehaviour(headersOf(request.headers), entry);
    return Response.json(body, { status });
  });
  return async (request) => {
    try {
      const answered = await routes(request);
      if (answered) return answered;
      if (request.method === 'POST' && new URL(request.url).pathname === '/orders') return await order(request);
      return new Response(null, { status: 404 });
    } catch {
      return Response.json({ error: 'handler failed' }, { status: 500 }); // what the runtime's error page would be
    }
  };
}

describeAdapter('fetch (in process)', async (setup) => ({ request: fetchApp(setup), close: async () => undefined }));
describeAdapter('fetch (over HTTP)', async (setup) => serveFetch(fetchApp(setup)));
describeGate('fetch (over HTTP)', async (setup) => serveFetch(fetchApp(setup)));

describe('fetch: queueRoutes', () => {
  const queue = new WaitingQueue({ store: new MemoryStore() });
  const routes = queueRoutes(queue, { memberId: () => 'alice', prefix: '/api/queue/' });
  const at = (method: string, path: string) => routes(new Request(`http://shop.test${path}`, { method }));

  it('answers its three routes under the prefix, matched on the path only (not the query)', async () => {
    expect((await at('POST', '/api/queue/enter?x=1'))?.status).toBe(200);
    expect((await at('GET', '/api/queue/position'))?.status).toBe(200);
    expect((await at('DELETE', '/api/queue'))?.status).toBe(204);
  });

  it('resolves undefined for every other request', async () => {
    for (const [method, path] of [
      ['GET', '/api/queue/enter'],
      ['POST', '/api/queue/enter/'],
      ['DELETE', '/api/queue/'],
      ['POST', '/enter'],
      ['GET', '/api/queue/positions'],
    ]) {
      expect(await at(method!, path!), `${method} ${path}`).toBeUndefined();
    }
  });

  it('refuses bad options when created', () => {
    expect(() => queueRoutes(queue, { memberId: () => 'a', prefix: 'queue' })).toThrow(WaitgateConfigError);
    expect(() => queueRoutes(queue, { memberId: () => 'a', extra: 1 } as never)).toThrow(WaitgateConfigError);
    expect(() => withEntryToken(queue, { memberId: () => 'a', settle: 'later' as never }, async () => new Response())).toThrow(WaitgateConfigError);
  });
});

describe('fetch: auto settle waits until the Response is finished', () => {
  async function guarded(handler: (request: Request, entry: Entry) => Promise<Response>) {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const order = withEntryToken(queue, { memberId: () => 'alice' }, handler);
    const request = (signal?: AbortSignal) =>
      order(new Request('http://shop.test/orders', { method: 'POST', headers: { 'x-entry-token': admission!.entryToken }, signal }));
    const claimed = async () => (await queue.stats()).claimed;
    return { queue, request, claimed };
  }

  /** A body of two chunks, the second only once `release` is called. */
  function slowBody() {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"ok":'));
        await gate;
        controller.enqueue(new TextEncoder().encode('true}'));
        controller.close();
      },
    });
    return { body, release };
  }

  it('consumes a 2xx only once its body was read to the end', async () => {
    const { body, release } = slowBody();
    const { queue, request, claimed } = await guarded(async () => new Response(body, { status: 201 }));
    const response = await request();
    expect(response.status).toBe(201);
    const text = response.text();
    await new Promise((r) => setTimeout(r, 20));
    expect(await claimed()).toBe(1); // the first chunk is out, not the rest: still claimed
    release();
    expect(await text).toBe('{"ok":true}');
    await expect.poll(() => queue.state('alice')).toBe('NOT_ENTERED');
  });

  it('releases a 2xx whose body is cancelled before its end (the client hung up mid-stream)', async () => {
    const { body } = slowBody();
    const { queue, request, claimed } = await guarded(async () => new Response(body, { status: 200 }));
    const response = await request();
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(claimed).toBe(0);
    expect(await queue.state('alice')).toBe('READY'); // the token works again
  });

  it('consumes a 2xx without a body (204) as soon as the handler resolved', async () => {
    const { queue, request } = await guarded(async () => new Response(null, { status: 204 }));
    const response = await request();
    expect(response.body).toBeNull();
    await expect.poll(() => queue.state('alice')).toBe('NOT_ENTERED');
  });

  it('releases when the request signal aborts before the body is read, and keeps the headers and status', async () => {
    const { request, claimed } = await guarded(async () => Response.json({ ok: true }, { status: 201, headers: { 'x-order': '7' } }));
    const hangUp = new AbortController();
    const response = await request(hangUp.signal);
    expect(response.headers.get('x-order')).toBe('7');
    expect(response.headers.get('content-type')).toBe('application/json');
    hangUp.abort();
    await expect.poll(claimed).toBe(0);
    expect(await response.json()).toEqual({ ok: true }); // the body is still whole; only the claim was released
  });

  it('rethrows what the handler threw, after releasing', async () => {
    const { request, claimed } = await guarded(async () => {
      throw new Error('db down');
    });
    await expect(request()).rejects.toThrow('db down');
    await expect.poll(claimed).toBe(0);
  });

  it("passes the runtime's further arguments (Next.js { params }, Cloudflare env) to the handler", async () => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const order = withEntryToken(queue, { memberId: () => 'alice' }, async (_request, entry, context: { params: Promise<{ id: string }> }) =>
      Response.json({ id: (await context.params).id, tokenId: entry.tokenId }, { status: 201 }),
    );
    const request = new Request('http://shop.test/orders/9', { method: 'POST', headers: { 'x-entry-token': admission!.entryToken } });
    const response = await order(request, { params: Promise.resolve({ id: '9' }) });
    expect(await response.json()).toEqual({ id: '9', tokenId: expect.any(String) });
  });
});
describeEventStream('fetch (over HTTP)', async (setup) => serveFetch(fetchApp(setup)));
