// waitgate quickstart on Redis: the same flow as quickstart.mjs, on a real server.
// REDIS_URL=redis://127.0.0.1:6379 node examples/quickstart-redis.mjs   (after `npm run build`)
// It writes only under its own, unique queue name and removes that queue's keys at the end.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { EntryTokenError, InvalidMemberIdError, RedisStore, StoreUnavailableError, WaitingQueue } from 'waitgate';

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

const short = (token) => `${token.slice(0, 8)}…`;
const members = ['alice', 'bob', 'carol', 'dave', 'erin'];

// A stand-in for the order table: tokenId is a UNIQUE column, the last guard against a second order per token.
const orders = new Map();
function insertOrder(memberId, tokenId, item) {
  if (orders.has(tokenId)) throw new Error('UNIQUE constraint failed: orders.token_id');
  orders.set(tokenId, { memberId, item });
}

async function run() {
  console.log(`Redis ${url}, queue "${name}"`);

  console.log('1. Five members enter');
  for (const member of members) {
    const p = await queue.enter(member);
    console.log(`  ${member}: ${p.status}, rank ${p.rank} of ${p.currentTotalWaitingCount}, ~${p.estimatedWaitSeconds} s, poll every ${p.pollingIntervalSeconds} s`);
  }
  const again = await queue.enter('alice');
  console.log(`  alice enters again: still rank ${again.rank} (enter is idempotent)`);

  console.log('2. admit(): the bucket lets 2 through (admitBurst defaults to the rate)');
  for (const a of await queue.admit()) {
    console.log(`  ${a.memberId} admitted, token ${short(a.entryToken)} expires ${new Date(a.expiresAt).toISOString()}`);
  }
  const carol = await queue.position('carol');
  console.log(`  carol is now ${carol.status} at rank ${carol.rank}, ~${carol.estimatedWaitSeconds} s`);

  console.log('3. alice orders: claim -> commit with claim.tokenId -> consume');
  const alice = await queue.token('alice');
  const aliceClaim = await queue.claim('alice', alice.entryToken);
  console.log(`  claimed: claimId ${aliceClaim.claimId}, tokenId ${aliceClaim.tokenId}, lease until ${new Date(aliceClaim.expiresAt).toISOString()}`);
  insertOrder('alice', aliceClaim.tokenId, 'sneakers');
  console.log(`  order committed; consume -> ${await queue.consume(aliceClaim)}`);
  console.log(`  consume again (a retry) -> ${await queue.consume(aliceClaim)}`);
  try {
    await queue.claim('alice', alice.entryToken);
  } catch (error) {
    if (!(error instanceof EntryTokenError)) throw error;
    console.log(`  reusing the token: ${error.name} ${error.code} (HTTP 401)`);
  }

  console.log('4. bob orders, the order rolls back, bob retries');
  const bob = await queue.token('bob');
  const bobClaim = await queue.claim('bob', bob.entryToken);
  try {
    await queue.claim('bob', bob.entryToken); // a second tab, at the same time
  } catch (error) {
    if (!(error instanceof EntryTokenError)) throw error;
    console.log(`  a concurrent second claim: ${error.code} (HTTP 409)`);
  }
  console.log(`  payment declined, rollback; release -> ${await queue.release(bobClaim)}`);
  console.log(`  bob is still ${await queue.state('bob')}`);
  const bobRetry = await queue.claim('bob', bob.entryToken);
  insertOrder('bob', bobRetry.tokenId, 'hoodie');
  console.log(`  retry committed; consume -> ${await queue.consume(bobRetry)}`);

  console.log('5. Bad input is refused before any Redis call');
  for (const bad of ['', -1]) {
    try {
      await queue.enter(bad);
    } catch (error) {
      if (!(error instanceof InvalidMemberIdError)) throw error;
      console.log(`  enter(${JSON.stringify(bad)}): ${error.name} ${error.code} (HTTP 400)`);
    }
  }

  console.log('6. An admitter admits on a timer (safe on every instance: the bucket lives in Redis)');
  const admitter = queue.startAdmitter({ intervalMs: 100 });
  try {
    while ((await queue.state('carol')) !== 'READY') await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    await admitter.stop();
  }
  console.log('  carol is READY; admitter stopped');

  console.log('7. stats()');
  console.log(' ', await queue.stats());
  console.log(`  orders in the table: ${orders.size}`);
}

/** Removes what this run created: its members, then the queue's few bookkeeping keys (all under its hash tag). */
async function cleanUp() {
  for (const member of members) await queue.leave(member);
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
