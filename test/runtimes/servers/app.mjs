// The app every runtime serves, on the built package (dist/, through the exports map) as a user
// runs it: the queue routes under /api/queue and the guarded POST /api/orders, on waitgate/fetch
// or on waitgate/hono (WAITGATE_ADAPTER), the member from the x-member-id header, as in
// examples/nextjs. The order handler answers 201, or follows x-test-status / x-test-throw.

import { Hono } from 'hono';
import { MemoryStore, WaitingQueue } from 'waitgate';
import { queueRoutes, withEntryToken } from 'waitgate/fetch';
import * as hono from 'waitgate/hono';

/** @param {Headers} headers */
async function orderAnswer(headers, tokenId) {
  if (headers.get('x-test-throw')) throw new Error('handler failed');
  return Response.json({ tokenId }, { status: Number(headers.get('x-test-status') ?? 201) });
}

console.log(`waitgate from ${import.meta.resolve('waitgate')}`);

/** @returns {(request: Request) => Promise<Response>} */
export function createApp(adapter = process.env.WAITGATE_ADAPTER ?? 'fetch') {
  const queue = new WaitingQueue({ store: new MemoryStore(), name: 'orders', admitRatePerSecond: 50 });
  queue.startAdmitter();
  if (adapter === 'hono') {
    const memberId = (c) => c.req.header('x-member-id');
    const app = new Hono();
    app.route('/api/queue', hono.queueRoutes(queue, { memberId }));
    app.post('/api/orders', hono.requireEntryToken(queue, { memberId }), (c) => orderAnswer(c.req.raw.headers, c.get('entry').tokenId));
    return async (request) => app.fetch(request);
  }
  const memberId = (request) => request.headers.get('x-member-id') ?? undefined;
  const routes = queueRoutes(queue, { memberId, prefix: '/api/queue' });
  const order = withEntryToken(queue, { memberId }, (request, entry) => orderAnswer(request.headers, entry.tokenId));
  return async (request) => {
    const answered = await routes(request);
    if (answered) return answered;
    if (request.method === 'POST' && new URL(request.url).pathname === '/api/orders') return order(request);
    return new Response(null, { status: 404 });
  };
}
