// A small order service on Fastify 5, with waitgate in front of POST /orders.
//
//   npm run build && npx tsx examples/fastify-ts/server.ts
//   PORT=8080 (default 3000); REDIS_URL=redis://127.0.0.1:6379 to use Redis instead of memory.
//
//   curl -X POST -H 'x-member-id: alice' localhost:3000/queue/enter
//   curl -H 'x-member-id: alice' localhost:3000/queue/position      # READY: copy entryToken
//   curl -X POST -H 'x-member-id: alice' -H 'x-entry-token: <entryToken>' \
//        -H 'content-type: application/json' -d '{"item":"sneakers"}' localhost:3000/orders

import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';
import { queueRoutes, requireEntryToken, type MemberIdResolver } from 'waitgate/fastify';

declare module 'fastify' {
  interface FastifyRequest {
    user?: { id: string }; // set by the onRequest hook below
  }
}

const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 1000 }) : null;
// Without an error listener, ioredis prints "Unhandled error event" stacks while Redis is down.
redis?.on('error', (error) => console.error('redis:', error.message));
const store = redis ? new RedisStore({ client: redis }) : new MemoryStore();
const queue = new WaitingQueue({ store, name: 'orders', admitRatePerSecond: 10 });
queue.on('error', (error) => console.error('[waitgate]', error.message));
const admitter = queue.startAdmitter(); // on every instance: the rate is shared through the store

// The order table. tokenId is UNIQUE: one entry token can never place two orders.
interface Order {
  id: number;
  memberId: string;
  item: string;
  tokenId: string;
}
const orders = new Map<string, Order>();
function insertOrder(row: Omit<Order, 'id'>): Order {
  if (orders.has(row.tokenId)) throw new Error(`duplicate token_id ${row.tokenId}`);
  const order = { id: orders.size + 1, ...row };
  orders.set(row.tokenId, order);
  return order;
}

const app = Fastify();
app.decorateRequest('user', undefined);
// Stands in for your auth (a session, a JWT): the member id from a header.
app.addHook('onRequest', async (request) => {
  const id = request.headers['x-member-id'];
  if (typeof id === 'string' && id !== '') request.user = { id };
});
const memberId: MemberIdResolver<FastifyRequest> = (request) => request.user?.id; // undefined -> 401

await app.register(queueRoutes, { queue, memberId, prefix: '/queue' }); // POST /queue/enter, GET /queue/position, DELETE /queue
app.post<{ Body: { item?: string } | undefined }>('/orders', { preHandler: requireEntryToken(queue, { memberId }) }, async (request, reply) => {
  // The preHandler answers 401/409/503 itself, so the handler only runs with a claimed entry.
  const entry = request.entry!;
  const item = request.body?.item ?? 'sneakers';
  return reply.code(201).send(insertOrder({ memberId: entry.memberId, item, tokenId: entry.tokenId })); // 2xx: token consumed
});

await app.listen({ port: Number(process.env.PORT ?? 3000) });
console.log(`listening on http://localhost:${(app.server.address() as AddressInfo).port}`);

async function stop(): Promise<void> {
  await app.close(); // finishes the requests in flight
  await admitter.stop();
  await redis?.quit();
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
