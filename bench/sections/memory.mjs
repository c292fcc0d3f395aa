// Redis memory per waiting member (INFO memory used_memory delta) next to a bare
// sorted set of the same ids, and the Redis time of one admit() of 50 at 10,000 vs
// 1,000,000 waiting (SLOWLOG with slowlog-log-slower-than 0).
//
// Two figures per crowd size: `memory` with abandonment off (abandonAfterSeconds: null:
// a waiting member is one sorted-set entry), and `memoryWithPresence` with it on (the
// default, 300 s): then the `seen` hash holds the members near the head as in a real
// sale, at most the presence head H = 2 × (burst + rate × abandonAfterSeconds) of them
// (30,100 with rate 50, burst 50), written by the enter script for members entering
// below H (through the API) or by bench/lib/seen.mjs for the head of a bulk load.
// admit() of 50 is timed with abandonment off and on, interleaved on the same line.

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { bulkEnter, bulkZadd, forEachConcurrent, ids } from '../lib/bulk-enter.mjs';
import { usedMemory } from '../lib/redis-info.mjs';
import { fillSeen, presenceHeadOf, seenKey } from '../lib/seen.mjs';
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
  client.setMaxListeners(50); // a fresh RedisStore (one `ready` listener each) per queue and flush
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const out = { memory: {}, memoryWithPresence: {}, bulkCheck: null, bulkCheckWithPresence: null, admit: null };
  try {
    const queueFor = (name, extra = {}) => new WaitingQueue({ store: new RedisStore({ client }), name, operationTimeoutMs: 30_000, ...extra });
    const all = memberIds(Math.max(...sizes));
    // Abandonment off (null): a waiting member is one sorted-set entry. On (the default, 300 s):
    // plus a `seen` entry for each member near the head.
    const OFF = { abandonAfterSeconds: null };
    const presenceHead = presenceHeadOf(queueFor('probe').config);
    // Loads `members` into queue 'mem': through the API up to 100,000, else one real enter and the bulk path
    // (then, with presence, the first H members get their `seen` entry, as the enter script gives it to
    // members entering below H).
    const loadQueue = async (members, { presence, api }) => {
      const q = queueFor('mem', presence ? {} : OFF);
      if (api) {
        // Through the API: queue.enter() for each member, 256 in flight (ioredis pipelines them).
        await forEachConcurrent(members.length, 256, (i) => q.enter(members[i]));
        return;
      }
      await q.enter(members[0]);
      await bulkEnter(control, 'mem', members.slice(1), { batch: 1000 });
      if (presence) await fillSeen(control, 'mem', members.slice(0, presenceHead));
    };
    const API_METHOD = 'queue.enter() per member, 256 in flight';
    const BULK_METHOD = 'bulk enter (bench/lib/bulk-enter.mjs: enterIfAbsent semantics, 1,000 per EVAL) after one queue.enter()';
    for (const n of sizes) {
      const members = all.slice(0, n);
      const api = n <= 100_000;
      const method = api ? API_METHOD : `${BULK_METHOD}`;
      const bare = await measureLoad(control, () => bulkZadd(control, 'bare:waiting', members));
      const waitgate = await measureLoad(control, () => loadQueue(members, { presence: false, api }));
      const waiting = await control.zcard('{waitgate:mem}:waiting');
      if (waiting !== n) throw new Error(`expected ${n} waiting, found ${waiting}`);
      out.memory[n] = {
        abandonAfterSeconds: null,
        waitgateBytesPerMember: round(waitgate.bytes / n, 1),
        bareZsetBytesPerMember: round(bare.bytes / n, 1),
        ratio: round(waitgate.bytes / bare.bytes, 3),
        waitgateLoad: method,
        waitgateLoadMs: round(waitgate.loadMs, 0),
        bareLoadMs: round(bare.loadMs, 0),
      };
      log(
        `  ${n.toLocaleString('en-US')} members, abandonment off: waitgate ${out.memory[n].waitgateBytesPerMember} B, bare zset ${out.memory[n].bareZsetBytesPerMember} B per member (loaded in ${(waitgate.loadMs / 1000).toFixed(1)} s)`,
      );

      const withPresence = await measureLoad(control, () => loadQueue(members, { presence: true, api }));
      const seenEntries = await control.hlen(seenKey('mem'));
      const expectedSeen = Math.min(n, presenceHead);
      if (seenEntries !== expectedSeen) throw new Error(`expected ${expectedSeen} seen entries (presence head ${presenceHead}), found ${seenEntries}`);
      out.memoryWithPresence[n] = {
        abandonAfterSeconds: 300,
        presenceHead,
        seenEntries,
        waitgateBytesPerMember: round(withPresence.bytes / n, 1),
        bareZsetBytesPerMember: round(bare.bytes / n, 1),
        ratio: round(withPresence.bytes / bare.bytes, 3),
        bytesPerSeenEntry: round((withPresence.bytes - waitgate.bytes) / seenEntries, 1),
        waitgateLoad: api
          ? `${API_METHOD} (the enter script records the first ${presenceHead.toLocaleString('en-US')})`
          : `${BULK_METHOD}, then seen for the first ${presenceHead.toLocaleString('en-US')} (bench/lib/seen.mjs)`,
        waitgateLoadMs: round(withPresence.loadMs, 0),
      };
      const m = out.memoryWithPresence[n];
      log(
        `  ${n.toLocaleString('en-US')} members, abandonment on (300 s, presence head ${presenceHead.toLocaleString('en-US')}): waitgate ${m.waitgateBytesPerMember} B per member, ratio ${m.ratio} to the bare zset; ${seenEntries.toLocaleString('en-US')} seen entries, ${m.bytesPerSeenEntry} B each`,
      );

      if (n === 100_000) {
        // The bulk path leaves what real enters leave: same memory, and a real enter continues the sequence.
        const bulk = await measureLoad(control, () => loadQueue(members, { presence: false, api: false }));
        const q = queueFor('mem', OFF);
        const next = await q.enter('after-bulk');
        const mid = await q.position(members[n / 2]);
        out.bulkCheck = {
          bulkBytesPerMember: round(bulk.bytes / n, 1),
          apiBytesPerMember: out.memory[n].waitgateBytesPerMember,
          rankOfNextEnter: next.rank,
          rankOfMiddleMember: mid.rank,
          ok: next.rank === n && mid.rank === n / 2 && Math.abs(bulk.bytes - waitgate.bytes) / waitgate.bytes < 0.02,
        };
        // And with presence: bulk + seen for the head vs real enters with abandonment on.
        const bulkSeen = await measureLoad(control, () => loadQueue(members, { presence: true, api: false }));
        out.bulkCheckWithPresence = {
          bulkBytesPerMember: round(bulkSeen.bytes / n, 1),
          apiBytesPerMember: m.waitgateBytesPerMember,
          ok: Math.abs(bulkSeen.bytes - withPresence.bytes) / withPresence.bytes < 0.02,
        };
        log(
          `  bulk path check at 100,000: off ${out.bulkCheck.bulkBytesPerMember} vs ${out.bulkCheck.apiBytesPerMember} B through the API (ranks continue: ${out.bulkCheck.ok}); on ${out.bulkCheckWithPresence.bulkBytesPerMember} vs ${out.bulkCheckWithPresence.apiBytesPerMember} B (${out.bulkCheckWithPresence.ok})`,
        );
      }
    }

    // admit() of 50: Redis time (SLOWLOG, microseconds) at 10,000 vs 1,000,000 waiting, with
    // abandonment off (null) and on (300 s), calls interleaved on the same line: the first
    // 5,000 members have a `seen` entry (every call admits 50, none dropped). Both pay the
    // HDEL of `seen` for the members popped; on also reads their entries (HMGET).
    out.admit = {};
    out.admitWithPresence = {};
    const CALLS = 25;
    for (const n of [10_000, Math.max(...sizes)]) {
      await control.flushall();
      const variants = {
        off: queueFor('adm', { admitRatePerSecond: 1_000_000, admitBurst: 50, ...OFF }),
        on: queueFor('adm', { admitRatePerSecond: 1_000_000, admitBurst: 50 }),
      };
      await variants.off.enter(all[0]);
      await bulkEnter(control, 'adm', all.slice(1, n), { batch: 1000 });
      await fillSeen(control, 'adm', all.slice(0, 2 * (CALLS + 1) * 50 * 2));
      for (const q of Object.values(variants)) await q.admit(); // loads the script on this connection (EVAL), not timed
      await control.config('SET', 'slowlog-log-slower-than', '0');
      await control.config('SET', 'slowlog-max-len', '1024');
      const times = { off: [], on: [] };
      const counts = { off: [], on: [] };
      for (let i = 0; i < CALLS; i++) {
        for (const name of i % 2 ? ['on', 'off'] : ['off', 'on']) {
          await sleep(2); // a new millisecond: the bucket refills (Redis TIME has ms resolution here)
          await control.slowlog('RESET');
          const admitted = await variants[name].admit();
          counts[name].push(admitted.length);
          const entries = await control.slowlog('GET', 10);
          const own = entries.find((e) => String(e[3]?.[0]).toLowerCase().startsWith('eval'));
          if (own) times[name].push(Number(own[2]));
        }
      }
      await control.config('SET', 'slowlog-log-slower-than', '10000');
      const summary = (name) => ({
        medianUs: median(times[name]),
        minUs: Math.min(...times[name]),
        maxUs: Math.max(...times[name]),
        calls: times[name].length,
        admittedPerCall: median(counts[name]),
      });
      out.admit[n] = { ...summary('off'), abandonAfterSeconds: null };
      out.admitWithPresence[n] = { ...summary('on'), abandonAfterSeconds: 300 };
      log(
        `  admit(50) at ${n.toLocaleString('en-US')} waiting: median ${out.admit[n].medianUs} us of Redis time with abandonment off, ${out.admitWithPresence[n].medianUs} us on (${CALLS} calls each, interleaved; ${out.admitWithPresence[n].admittedPerCall} admitted per call)`,
      );
    }
    {
      const [small, big] = Object.values(out.admitWithPresence);
      out.admitRatioWithPresence = round(big.medianUs / small.medianUs, 3);
    }
    const [small, big] = Object.values(out.admit);
    out.admitRatio = round(big.medianUs / small.medianUs, 3);
    return out;
  } finally {
    await control.flushall().catch(() => undefined);
    await Promise.all([client, control].map((c) => c.quit().catch(() => c.disconnect())));
  }
}
