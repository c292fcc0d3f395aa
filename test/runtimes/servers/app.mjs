// The app every runtime serves, on the built package (dist/, through the exports map) as a user
// runs it: the queue routes under /api/queue and the guarded POST /api/orders, on waitgate/fetch
// or on waitgate/hono (WAITGATE_ADAPTER), the member from the x-member-id header, as in
// examples/nextjs. The order handler answers 201, or follows x-test-status / x-test-throw.
// With WAITGATE_SIGNING_KEY (a PKCS#8 PEM, kid `main`) tokens are signed passes, and
// GET /api/checkout checks one with verifyEntryPass (waitgate/pass) alone, as the Next.js
// example's Edge middleware does: 200 let through, 401 refused with the reason.

import { Hono } from 'hono';
import { MemoryStore, WaitingQueue } from 'waitgate';
import { queueRoutes, withEntryToken } from 'waitgate/fetch';
import * as hono from 'waitgate/hono';
import { verifyEntryPass } from 'waitgate/pass';

/** @param {Headers} headers */
async function orderAnswer(headers, tokenId) {
  if (headers.get('x-test-throw')) throw new Error('handler failed');
  return Response.json({ tokenId }, { status: Number(headers.get('x-test-status') ?? 201) });
}

/** GET /api/checkout: the pass in x-entry-token checked with no store call. */
async function checkout(request, keys) {
  const pass = request.headers.get('x-entry-token');
  const memberId = request.headers.get('x-member-id') ?? undefined;
  const refuse = (code, message) => Response.json({ error: { code, message } }, { status: 401, headers: { 'cache-control': 'no-store' } });
  if (!pass) return refuse('ENTRY_TOKEN_MISSING', 'no entry pass');
  const result = await verifyEntryPass(pass, { keys, queue: 'orders', memberId });
  if (!result.valid) return refuse('ENTRY_TOKEN_INVALID', `entry pass refused: ${result.reason}`);
  return Response.json({ memberId: result.memberId, tokenId: result.tokenId });
}

console.log(`waitgate from ${import.meta.resolve('waitgate')}`);

/** @returns {(request: Request) => Promise<Response>} */
export function createApp(adapter = process.env.WAITGATE_ADAPTER ?? 'fetch') {
  const privateKey = process.env.WAITGATE_SIGNING_KEY;
  const signing = privateKey ? { keys: [{ kid: 'main', privateKey }] } : undefined;
  const queue = new WaitingQueue({ store: new MemoryStore(), name: 'orders', admitRatePerSecond: 50, signing });
  queue.startAdmitter();
  const serve = adapter === 'hono' ? honoApp(queue) : fetchApp(queue);
  return async (request) => {
    if (signing && request.method === 'GET' && new URL(request.url).pathname === '/api/checkout') return checkout(request, queue.jwks());
    return serve(request);
  };
}

function honoApp(queue) {
  const memberId = (c) => c.req.header('x-member-id');
  const app = new Hono();
  app.route('/api/queue', hono.queueRoutes(queue, { memberId }));
  app.post('/api/orders', hono.requireEntryToken(queue, { memberId }), (c) => orderAnswer(c.req.raw.headers, c.get('entry').tokenId));
  return async (request) => app.fetch(request);
}

function fetchApp(queue) {
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
