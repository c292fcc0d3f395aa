// The Next.js recipe's shared module: one WaitingQueue per server process, and the auth stand-in.
// The route handlers in app/api/ import it (route files may export only handlers and config).
//
// Copy lib/ and app/ into a Next.js app (App Router, Node.js runtime, the default) with waitgate
// installed (in your app, import this module as `@/lib/waitgate`). test/examples/nextjs-recipe.test.ts
// calls these handlers with real Request objects.

import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';

function redisClient(url: string): Redis {
  const client = new Redis(url);
  // ioredis emits 'error' on every failed (re)connect; unheard, Node prints "Unhandled error
  // event" (`next build` loads this module too). The queue reports what fails a call.
  client.on('error', (error: Error) => console.error('[redis]', error.message));
  return client;
}

function createQueue(): WaitingQueue {
  // Several instances (serverless, several pods) must share the queue: use Redis there.
  const store = process.env.REDIS_URL ? new RedisStore({ client: redisClient(process.env.REDIS_URL) }) : new MemoryStore();
  // With a signing key (a PKCS#8 PEM, ES256 or Ed25519), entry tokens are signed passes that
  // middleware.ts checks on the Edge; its public keys are served at /api/queue/.well-known/jwks.json.
  const privateKey = process.env.WAITGATE_SIGNING_KEY;
  const signing = privateKey ? { keys: [{ kid: 'main', privateKey }] } : undefined;
  const queue = new WaitingQueue({ store, name: 'orders', admitRatePerSecond: 10, signing });
  queue.on('error', (error) => console.error('[waitgate]', error.message));
  queue.startAdmitter(); // on every instance: the rate is shared through the store
  return queue;
}

// Kept on globalThis so that `next dev`, which re-evaluates modules on every edit, keeps one queue.
const shared = globalThis as typeof globalThis & { waitgateQueue?: WaitingQueue };
export const queue = (shared.waitgateQueue ??= createQueue());

/** Stands in for your auth (next-auth's `auth()`, a session cookie): the member from a header. */
export function currentUser(request: Request): { id: string } | undefined {
  const id = request.headers.get('x-member-id');
  return id ? { id } : undefined;
}

/** The order table: tokenId is UNIQUE, so one entry token can never place two orders. */
export const db = {
  orders: new Map<string, { id: number; memberId: string; item: string; tokenId: string }>(),
  async insertOrder(row: { memberId: string; item: string; tokenId: string }) {
    if (this.orders.has(row.tokenId)) throw new Error(`duplicate token_id ${row.tokenId}`);
    const order = { id: this.orders.size + 1, ...row };
    this.orders.set(row.tokenId, order);
    return order;
  },
};
