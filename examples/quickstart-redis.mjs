// waitgate quickstart on Redis: the same flow as quickstart.mjs, on a real server.
// REDIS_URL=redis://127.0.0.1:6379 node examples/quickstart-redis.mjs   (after `npm run build`)
// It writes only under its own, unique queue name and removes that queue's keys at the end.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisStore, StoreUnavailableError, WaitingQueue } from 'waitgate';
import { MEMBERS, walkThrough } from './quickstart-walkthrough.mjs';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Fail fast when Redis is away, instead of ioredis queueing and retrying a command for ~73 s.
const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 });
redis.on('error', () => {}); // reconnect noise; failures reach the calls below as StoreUnavailableError

const prefix = 'waitgate';
const name = `quickstart-${randomBytes(4).toString('hex')}`;
const queue = new WaitingQueue({
  store: new RedisStore({ client: redis, prefix }), // keys: {waitgate:<name>}:*, one Cluster slot
  name,
  admitRatePerSecond: 2, // slow on purpose, so the queue is visible
  entryTokenTtlSeconds: 300,
  claimTtlSeconds: 30,
  operationTimeoutMs: 1000,
});
queue.on('admitted', (members) => console.log(`  [event admitted] ${members.map((m) => m.memberId).join(', ')}`));
queue.on('warning', (warning) => console.warn(`  [event warning] ${warning.code}: ${warning.message}`));
queue.on('error', (error) => console.error(`  [event error] ${error.message}`));

async function run() {
  console.log(`Redis ${url}, queue "${name}"`);
  await walkThrough(queue);
}

/** Removes what this run created: its members, then the queue's few bookkeeping keys (all under its hash tag). */
async function cleanUp() {
  for (const member of MEMBERS) await queue.leave(member);
  const keys = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `{${prefix}:${name}}:*`, 'COUNT', 100);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length > 0) await redis.del(...keys);
  console.log(`Cleaned up: members left, ${keys.length} keys of "${name}" deleted`);
}

try {
  await run();
} catch (error) {
  if (!(error instanceof StoreUnavailableError)) throw error;
  console.error(`Redis at ${url} is unavailable (${error.message}). Start one, or set REDIS_URL.`);
  process.exitCode = 1;
} finally {
  if (redis.status === 'ready') {
    await cleanUp();
    await redis.quit();
  } else {
    redis.disconnect();
  }
}
