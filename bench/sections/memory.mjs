// Redis memory per waiting member (INFO memory used_memory delta) next to a bare
// sorted set of the same ids, and the Redis time of one admit() of 50 at 10,000 vs
// 1,000,000 waiting (SLOWLOG with slowlog-log-slower-than 0).

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { bulkEnter, bulkZadd, forEachConcurrent, ids } from '../lib/bulk-enter.mjs';
import { usedMemory } from '../lib/redis-info.mjs';
import { median, round } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Member ids as a shop might have them: 16 characters. */
const memberIds = (n) => ids('shopper-', 10_000_000, 10_000_000 + n); // 'shopper-10000000' ...

/** used_memory once Redis settled (rehashing done, lazy frees run): the lowest of a few readings. */
async function settledMemory(client) {
  let lowest = Infinity;
  for (let i = 0; i < 4; i++) {
    await sleep(150);
    lowest = Math.min(lowest, await usedMemory(client));
  }
  return lowest;
}

async function measureLoad(control, load) {
  await control.flushall();
  const before = await settledMemory(control);
  const t0 = performance.now();
  await load();
  const loadMs = performance.now() - t0;
  const after = await settledMemory(control);
  return { bytes: after - before, loadMs };
}

export async function runMemory({ url, sizes = [100_000, 1_000_000], log = console.log }) {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const out = { memory: {}, bulkCheck: null, admit: null };
  try {
    const queueFor = (name, extra = {}) => new WaitingQueue({ store: new RedisStore({ client }), name, operationTimeoutMs: 30_000, ...extra });
    const all = memberIds(Math.max(...sizes));
    for (const n of sizes) {
      const members = all.slice(0, n);
      const bare = await measureLoad(control, () => bulkZadd(control, 'bare:waiting', members));
      let waitgate;
      let method;
      if (n <= 100_000) {
        // Through the API: queue.enter() for each member, 256 in flight (ioredis pipelines them).
        method = 'queue.enter() per member, 256 in flight';
        waitgate = await measureLoad(control, async () => {
          const q = queueFor('mem');
          await forEachConcurrent(n, 256, (i) => q.enter(members[i]));
        });
      } else {
        method = 'bulk enter (bench/lib/bulk-enter.mjs: enterIfAbsent semantics, 1,000 per EVAL) after one queue.enter()';
        waitgate = await measureLoad(control, async () => {
          const q = queueFor('mem');
          await q.enter(members[0]);
          await bulkEnter(control, 'mem', members.slice(1), { batch: 1000 });
        });
      }
      const waiting = await control.zcard('{waitgate:mem}:waiting');
      if (waiting !== n) throw new Error(`expected ${n} waiting, found ${waiting}`);
      out.memory[n] = {
        waitgateBytesPerMember: round(waitgate.bytes / n, 1),
        bareZsetBytesPerMember: round(bare.bytes / n, 1),
        ratio: round(waitgate.bytes / bare.bytes, 3),
        waitgateLoad: method,
        waitgateLoadMs: round(waitgate.loadMs, 0),
        bareLoadMs: round(bare.loadMs, 0),
      };
      log(`  ${n.toLocaleString('en-US')} members: waitgate ${out.memory[n].waitgateBytesPerMember} B, bare zset ${out.memory[n].bareZsetBytesPerMember} B per member (loaded in ${(waitgate.loadMs / 1000).toFixed(1)} s)`);

      if (n === 100_000) {
        // The bulk path leaves what real enters leave: same memory, and a real enter continues the sequence.
        const bulk = await measureLoad(control, async () => {
          const q = queueFor('mem');
          await q.enter(members[0]);
          await bulkEnter(control, 'mem', members.slice(1), { batch: 1000 });
        });
        const q = queueFor('mem');
        const next = await q.enter('after-bulk');
        const mid = await q.position(members[n / 2]);
        out.bulkCheck = {
          bulkBytesPerMember: round(bulk.bytes / n, 1),
          apiBytesPerMember: out.memory[n].waitgateBytesPerMember,
          rankOfNextEnter: next.rank,
          rankOfMiddleMember: mid.rank,
          ok: next.rank === n && mid.rank === n / 2 && Math.abs(bulk.bytes - waitgate.bytes) / waitgate.bytes < 0.02,
        };
      }
    }

    // admit() of 50: Redis time (SLOWLOG, microseconds) at 10,000 vs 1,000,000 waiting.
    out.admit = {};
    for (const n of [10_000, Math.max(...sizes)]) {
      await control.flushall();
      const q = queueFor('adm', { admitRatePerSecond: 1_000_000, admitBurst: 50 });
      await q.enter(all[0]);
      await bulkEnter(control, 'adm', all.slice(1, n), { batch: 1000 });
      await q.admit(); // loads the script on this connection (EVAL), not timed
      await control.config('SET', 'slowlog-log-slower-than', '0');
      await control.config('SET', 'slowlog-max-len', '1024');
      const times = [];
      const counts = [];
      for (let i = 0; i < 25; i++) {
        await sleep(2); // a new millisecond: the bucket refills (Redis TIME has ms resolution here)
        await control.slowlog('RESET');
        const admitted = await q.admit();
        counts.push(admitted.length);
        const entries = await control.slowlog('GET', 10);
        const own = entries.find((e) => String(e[3]?.[0]).toLowerCase().startsWith('eval'));
        if (own) times.push(Number(own[2]));
      }
      await control.config('SET', 'slowlog-log-slower-than', '10000');
      out.admit[n] = { medianUs: median(times), minUs: Math.min(...times), maxUs: Math.max(...times), calls: times.length, admittedPerCall: median(counts) };
      log(`  admit(50) at ${n.toLocaleString('en-US')} waiting: median ${median(times)} us of Redis time (${times.length} calls)`);
    }
    const [small, big] = Object.values(out.admit);
    out.admitRatio = round(big.medianUs / small.medianUs, 3);
    return out;
  } finally {
    await control.flushall().catch(() => undefined);
    await Promise.all([client, control].map((c) => c.quit().catch(() => c.disconnect())));
  }
}
