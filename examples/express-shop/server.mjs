// Starts the example shop: memory store by default, Redis when REDIS_URL is set.
//   npm run example                 the shop on http://localhost:3000
//   DEMO=1 npm run example          a slow queue with simulated shoppers, to watch it move
//   REDIS_URL=redis://... npm run example
//   ADMIN_TOKEN=$(openssl rand -hex 16) npm run example   turns on POST /admin/controls (see README.md here)
//   OPS_PASSWORD=... npm run example   the operator dashboard's password (/ops/waitgate/, user ops; default demo)

import { MemoryStore, RedisStore, WaitingQueue } from 'waitgate';
import { createShop } from './app.mjs';
import { createMetrics } from './metrics.mjs';
import { listProducts, openDatabase } from './db.mjs';
import { startSimulatedShoppers } from './simulated-shoppers.mjs';

const demo = process.env.DEMO === '1' || process.argv.includes('--demo');
const port = Number(process.env.PORT ?? 3000);

async function makeStore() {
  if (!process.env.REDIS_URL) return { store: new MemoryStore(), close: async () => {} };
  const { Redis } = await import('ioredis');
  const client = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
  return { store: new RedisStore({ client }), close: () => client.quit() };
}

const { store, close } = await makeStore();
const queue = new WaitingQueue({
  store,
  name: 'sneaker-drop',
  admitRatePerSecond: demo ? 0.5 : 5,
  maxActive: demo ? 3 : 50,
  entryTokenTtlSeconds: 120,
  claimTtlSeconds: 15,
  // Every day, not just the drop: shoppers go straight in while the rate allows; the line forms beyond it.
  safetyNet: true,
});
queue.on('error', (error) => console.error('[waitgate]', error.message));
queue.on('warning', (warning) => console.warn('[waitgate]', warning.message));
// The operator changed the controls through /admin/controls: one line in the log.
queue.on('controls', ({ version, mode, message, opensAt, shuffle }) =>
  console.log('[waitgate] controls', JSON.stringify({ version, mode, message, opensAt, shuffle })),
);

const db = openDatabase(process.env.SHOP_DB ?? ':memory:');
// The queue sells what the database holds: it never lets more shoppers in than pairs are left,
// tells each its odds, and closes itself ("Sold out") when the last pair is bought.
const pairsLeft = listProducts(db).reduce((n, product) => n + product.stock, 0);
await queue.setControls({ stock: pairsLeft }, { actor: 'shop:startup' });
const admitter = queue.startAdmitter({ intervalMs: 500 });
const shoppers = demo ? startSimulatedShoppers({ queue, db, count: 8 }) : null;
const adminToken = process.env.ADMIN_TOKEN || undefined;
// Prometheus metrics of the queue at GET /metrics (waitgate/opentelemetry).
const metrics = createMetrics(queue);
// The operator dashboard at /ops/waitgate/ (waitgate/dashboard), user `ops`, password OPS_PASSWORD.
const opsPassword = process.env.OPS_PASSWORD || 'demo';
const server = createShop({ queue, db, adminToken, metrics: metrics.handler, opsPassword }).listen(port, () => {
  console.log(
    `waitgate example shop on http://localhost:${port} (${process.env.REDIS_URL ? 'Redis' : 'memory'} store${demo ? ', demo mode' : ''}${adminToken ? ', operator routes on' : ''})`,
  );
  console.log(
    `operator dashboard on http://localhost:${port}/ops/waitgate/ (user ops, password ${process.env.OPS_PASSWORD ? 'from OPS_PASSWORD' : `${opsPassword}: set OPS_PASSWORD to change it`})`,
  );
});

async function shutdown() {
  server.close();
  shoppers?.stop();
  await admitter.stop();
  await metrics.shutdown();
  await close();
  db.close();
  process.exit(0);
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
