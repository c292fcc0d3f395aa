// A small order service on Hono (served by @hono/node-server), with waitgate in front of POST /orders.
//
//   npm run build && npx tsx examples/hono/server.ts
//   PORT=8080 (default 3000); REDIS_URL=redis://127.0.0.1:6379 to use Redis instead of memory.
//
//   curl -X POST -H 'x-member-id: alice' localhost:3000/queue/enter
//   curl -H 'x-member-id: alice' localhost:3000/queue/position      # READY: copy entryToken
//   curl -X POST -H 'x-member-id: alice' -H 'x-entry-token: <entryToken>' \
//        -H 'content-type: application/json' -d '{"item":"sneakers"}' localhost:3000/orders

import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';
import { queueRoutes, requireEntryToken } from 'waitgate/hono';

// What the auth middleware below puts on the Context.
type AppEnv = { Variables: { user?: { id: string } } };

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

const app = new Hono<AppEnv>();
// Stands in for your auth (a session, a JWT): the member id from a header.
app.use(async (c, next) => {
  const id = c.req.header('x-member-id');
  if (id) c.set('user', { id });
  await next();
});
const memberId = (c: Context<AppEnv>) => c.get('user')?.id; // undefined -> 401

app.route('/queue', queueRoutes(queue, { memberId })); // POST /queue/enter, GET /queue/position, DELETE /queue
app.post('/orders', requireEntryToken(queue, { memberId }), async (c) => {
  const entry = c.get('entry'); // Entry, set by the guard, which answers 401/409/503 itself
  const body = (await c.req.json().catch(() => ({}))) as { item?: unknown };
  const item = typeof body.item === 'string' ? body.item : 'sneakers';
  return c.json(insertOrder({ memberId: entry.memberId, item, tokenId: entry.tokenId }), 201); // 2xx: consumed once sent
});

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`listening on http://localhost:${info.port}`);
});

async function stop(): Promise<void> {
  await new Promise((resolve) => server.close(resolve)); // finish the requests in flight
  await admitter.stop();
  await redis?.quit();
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
