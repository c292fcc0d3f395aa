// A small order service on Koa 3, with waitgate in front of POST /orders.
//
//   npm run build && npx tsx examples/koa-ts/server.ts
//   PORT=8080 (default 3000); REDIS_URL=redis://127.0.0.1:6379 to use Redis instead of memory.
//
//   curl -X POST -H 'x-member-id: alice' localhost:3000/queue/enter
//   curl -H 'x-member-id: alice' localhost:3000/queue/position      # READY: copy entryToken
//   curl -X POST -H 'x-member-id: alice' -H 'x-entry-token: <entryToken>' 'localhost:3000/orders?item=sneakers'

import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';
import { queueRoutes, requireEntryToken, type EntryState, type MemberIdResolver } from 'waitgate/koa';

// EntryState types ctx.state.entry, which the guard sets.
interface AppState extends EntryState {
  user?: { id: string }; // set by the auth middleware below
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

const app = new Koa<AppState>();
// Stands in for your auth (a session, a JWT): the member id from a header.
app.use(async (ctx, next) => {
  const id = ctx.get('x-member-id');
  if (id) ctx.state.user = { id };
  await next();
});
const memberId: MemberIdResolver<Koa.ParameterizedContext<AppState>> = (ctx) => ctx.state.user?.id; // undefined -> 401

app.use(queueRoutes(queue, { memberId, prefix: '/queue' })); // POST /queue/enter, GET /queue/position, DELETE /queue
const guard = requireEntryToken(queue, { memberId });
app.use(async (ctx, next) => {
  if (ctx.method !== 'POST' || ctx.path !== '/orders') return next();
  await guard(ctx, async () => {
    const entry = ctx.state.entry!; // set by the guard, which answers 401/409/503 itself
    const item = typeof ctx.query.item === 'string' ? ctx.query.item : 'sneakers'; // no body parser here
    ctx.status = 201; // 2xx: the guard consumes the token
    ctx.body = insertOrder({ memberId: entry.memberId, item, tokenId: entry.tokenId });
  });
});

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on http://localhost:${(server.address() as AddressInfo).port}`);
});

async function stop(): Promise<void> {
  await new Promise((resolve) => server.close(resolve)); // finish the requests in flight
  await admitter.stop();
  await redis?.quit();
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
