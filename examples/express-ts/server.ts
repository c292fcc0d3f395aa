// A small order service on Express 5, with waitgate in front of POST /orders.
//
//   npm run build && npx tsx examples/express-ts/server.ts
//   PORT=8080 (default 3000); REDIS_URL=redis://127.0.0.1:6379 to use Redis instead of memory.
//
//   curl -X POST -H 'x-member-id: alice' localhost:3000/queue/enter
//   curl -H 'x-member-id: alice' localhost:3000/queue/position      # READY: copy entryToken
//   curl -X POST -H 'x-member-id: alice' -H 'x-entry-token: <entryToken>' \
//        -H 'content-type: application/json' -d '{"item":"sneakers"}' localhost:3000/orders

import type { AddressInfo } from 'node:net';
import express, { type Request, type RequestHandler } from 'express';
import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';
import { queueRoutes, requireEntryToken, type MemberIdResolver } from 'waitgate/express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- how Express request types are extended
  namespace Express {
    interface Request {
      user?: { id: string }; // set by authenticate below
    }
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

// Stands in for your auth (a session, a JWT): the member id from a header.
const authenticate: RequestHandler = (req, _res, next) => {
  const id = req.get('x-member-id');
  if (id) req.user = { id };
  next();
};
const memberId: MemberIdResolver<Request> = (req) => req.user?.id; // undefined -> 401

const app = express();
app.use(authenticate);
app.use('/queue', queueRoutes(queue, { memberId })); // POST /queue/enter, GET /queue/position, DELETE /queue
app.post('/orders', express.json(), requireEntryToken(queue, { memberId }), (req, res) => {
  const entry = req.entry!; // set by the guard, which answers 401/409/503 itself
  const item = typeof req.body?.item === 'string' ? req.body.item : 'sneakers';
  res.status(201).json(insertOrder({ memberId: entry.memberId, item, tokenId: entry.tokenId })); // 2xx: token consumed
});

const server = app.listen(Number(process.env.PORT ?? 3000), (error) => {
  if (error) throw error; // e.g. EADDRINUSE
  console.log(`listening on http://localhost:${(server.address() as AddressInfo).port}`);
});

async function stop(): Promise<void> {
  await new Promise((resolve) => server.close(resolve)); // finish the requests in flight
  await admitter.stop();
  await redis?.quit();
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
