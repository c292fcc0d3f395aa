// An independent check of the group-commit figure "enter at concurrency 256 against the
// floor" (issue 23 item 11), written apart from bench/sections/micro.mjs so that the two
// do not share a mistake: its own redis-server (scripts/redis-server.mjs), ONE ioredis
// client for everything, the built package (dist/), 256 concurrent callers, 20,000 fresh
// members a round, the floor a one-key `ZADD NX` script sent through the same client, 5
// rounds with the two variants interleaved (their order swapped every round), medians.
//
//   npm run build && node bench/harness-enter.mjs
//   node bench/harness-enter.mjs --rounds=5 --members=20000 --concurrency=256 --abandon=off --queue=per-round --json=out.json
//
// ratio = enter/s ÷ floor/s in one round (higher is better: 2.0 means 20,000 enters took
// half the time of 20,000 one-key ZADD NX scripts); the report gives every round's ratio
// and their median. Defaults are the queue's defaults (abandonAfterSeconds 300: the first
// ~30,100 members of a queue have their sign of life recorded as they enter), one queue for
// every round (`--queue=per-round`: a new queue each round, so every round is a crowd's
// first 20,000); `--abandon=off` sets abandonAfterSeconds null, as bench/sections/micro.mjs does.

import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from '../dist/index.js';
import { redisServerVersion, startRedisServer } from '../scripts/redis-server.mjs';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => {
      const [k, v = 'true'] = a.slice(2).split('=');
      return [k, v];
    }),
);
const ROUNDS = Number(args.rounds ?? 5);
const MEMBERS = Number(args.members ?? 20_000);
const CONCURRENCY = Number(args.concurrency ?? 256);
const ABANDON = args.abandon === 'off' ? null : undefined; // undefined: the default (300 s)
const PER_ROUND_QUEUE = args.queue === 'per-round';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Redis's own CPU (user + sys, µs) from INFO cpu. */
async function redisCpuUs(client) {
  const text = await client.info('cpu');
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)[1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/**
 * Runs `op(i)` for i in [0, n) with `concurrency` callers: ops/s, and the CPU each
 * operation cost this process and redis-server (µs; INFO is read outside the timed part).
 */
async function drive(client, n, concurrency, op) {
  let next = 0;
  const redisBefore = await redisCpuUs(client);
  const nodeBefore = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await op(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const node = process.cpuUsage(nodeBefore);
  const redisUs = (await redisCpuUs(client)) - redisBefore;
  return { opsPerSec: n / seconds, nodeUsPerOp: (node.user + node.system) / n, redisUsPerOp: redisUs / n };
}

const redis = await startRedisServer([], { dirPrefix: 'waitgate-harness-', killOnExit: true });
const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
try {
  const store = new RedisStore({ client });
  const queueOptions = ABANDON === null ? { abandonAfterSeconds: null } : {};
  let queueNo = 0;
  const newQueue = () => new WaitingQueue({ store, name: `harness-${queueNo++}`, ...queueOptions });
  let queue = newQueue();
  const floorSha = await client.script('LOAD', "return redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])");
  let unique = 0;
  const variants = {
    async enter(round) {
      if (PER_ROUND_QUEUE) queue = newQueue();
      const ids = Array.from({ length: MEMBERS }, () => `m${unique++}`);
      return drive(client, MEMBERS, CONCURRENCY, async (i) => {
        const p = await queue.enter(ids[i]);
        if (p.status !== 'WAITING') throw new Error(`round ${round}: enter answered ${p.status}`);
      });
    },
    async floor(round) {
      const key = PER_ROUND_QUEUE ? `floor:${round}` : 'floor';
      const ids = Array.from({ length: MEMBERS }, () => `m${unique++}`);
      return drive(client, MEMBERS, CONCURRENCY, (i) => client.evalsha(floorSha, 1, key, i, ids[i]));
    },
  };

  console.log(
    `harness-enter: redis-server ${redisServerVersion()} on port ${redis.port}, Node ${process.version}, ${cpus().length} CPUs, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `  ${ROUNDS} rounds x ${MEMBERS} fresh members, ${CONCURRENCY} concurrent callers, one ioredis client; abandonAfterSeconds ${ABANDON === null ? 'null' : 'default (300)'}; ${PER_ROUND_QUEUE ? 'a new queue each round' : 'one queue'}`,
  );
  // Warm-up (untimed): scripts loaded, JIT warm, the queue's generation learned.
  await variants.enter('warm');
  await variants.floor('warm');
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['enter', 'floor'] : ['floor', 'enter'];
    const row = {};
    for (const name of order) row[name] = await variants[name](r);
    row.ratio = row.enter.opsPerSec / row.floor.opsPerSec;
    rounds.push(row);
    const cpu = (v) => `Node ${v.nodeUsPerOp.toFixed(1)} + Redis ${v.redisUsPerOp.toFixed(1)} µs/op`;
    console.log(
      `  round ${r + 1}: enter ${Math.round(row.enter.opsPerSec).toLocaleString('en')}/s (${cpu(row.enter)}), floor ${Math.round(row.floor.opsPerSec).toLocaleString('en')}/s (${cpu(row.floor)}), ratio ${row.ratio.toFixed(3)}`,
    );
  }
  const result = {
    date: new Date().toISOString(),
    settings: { rounds: ROUNDS, members: MEMBERS, concurrency: CONCURRENCY, abandonAfterSeconds: ABANDON === null ? null : 'default', perRoundQueue: PER_ROUND_QUEUE },
    load: loadavg(),
    rounds,
    medianEnter: median(rounds.map((r) => r.enter.opsPerSec)),
    medianFloor: median(rounds.map((r) => r.floor.opsPerSec)),
    medianCpuUsPerOp: Object.fromEntries(
      ['enter', 'floor'].flatMap((v) => [
        [`${v} node`, median(rounds.map((r) => r[v].nodeUsPerOp))],
        [`${v} redis`, median(rounds.map((r) => r[v].redisUsPerOp))],
      ]),
    ),
    medianRatio: median(rounds.map((r) => r.ratio)),
  };
  console.log(
    `  median: enter ${Math.round(result.medianEnter).toLocaleString('en')}/s, floor ${Math.round(result.medianFloor).toLocaleString('en')}/s; ratio (median of per-round) ${result.medianRatio.toFixed(3)}; min ${Math.min(...rounds.map((r) => r.ratio)).toFixed(3)}`,
  );
  console.log(`  CPU µs/op, medians: ${Object.entries(result.medianCpuUsPerOp).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2) + '\n');
} finally {
  await client.quit().catch(() => client.disconnect());
  await redis.stop();
}
