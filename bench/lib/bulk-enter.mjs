// Loading large crowds fast, with the state waitgate's own enter would leave.
//
// `queue.enter()` is one EVALSHA per member (~10-20k/s here). For the 1,000,000-member
// figures that would take over a minute, so this runs the same checks and writes as
// lua/enterIfAbsent-5.lua for a batch of fresh members in one EVAL:
//   per member: skip it if it holds a token record (HEXISTS tokens) or already waits
//   (ZSCORE waiting); otherwise it gets the next entry sequence from meta's `seq`
//   counter (HINCRBY, once per batch for the whole batch) and is ZADDed with it.
// The result is the state N sequential enters of fresh ids leave: the waiting zset
// member -> seq, meta.seq = the last sequence. The queue must have been written once by
// a real `enter()` first (it creates the queue's generation). bench/run.mjs checks the
// bulk path against real enters (same memory per member, ranks continue).

import { createHash } from 'node:crypto';

export const BULK_ENTER_LUA = `
local waiting, tokens, meta = KEYS[1], KEYS[2], KEYS[3]
local fresh, seen = {}, {}
for i = 1, #ARGV do
  local m = ARGV[i]
  if not seen[m] and redis.call('HEXISTS', tokens, m) == 0 and not redis.call('ZSCORE', waiting, m) then
    seen[m] = true
    fresh[#fresh + 1] = m
  end
end
if #fresh == 0 then return 0 end
local last = redis.call('HINCRBY', meta, 'seq', #fresh)
local first = last - #fresh
local args = {}
for i = 1, #fresh do
  args[#args + 1] = first + i
  args[#args + 1] = fresh[i]
end
redis.call('ZADD', waiting, unpack(args))
return #fresh
`;

/** The keys of a queue, as src/store/keys.ts names them (prefix 'waitgate' unless given). */
export function queueKeys(name, prefix = 'waitgate') {
  const tag = `{${prefix}:${name}}`;
  return { waiting: `${tag}:waiting`, tokens: `${tag}:tokens`, active: `${tag}:active`, leases: `${tag}:leases`, consumed: `${tag}:consumed`, meta: `${tag}:meta` };
}

/** Member ids `<prefix><n>` for n in [from, to). */
export function ids(prefix, from, to) {
  const out = new Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = `${prefix}${i}`;
  return out;
}

/**
 * Enters `memberIds` into queue `name` with enterIfAbsent's semantics, `batch` per EVAL,
 * a few EVALs in flight. The queue must exist (one real enter first).
 */
export async function bulkEnter(client, name, memberIds, { batch = 1000, inFlight = 4 } = {}) {
  const k = queueKeys(name);
  if (typeof client.waitgateBenchBulkEnter !== 'function') {
    client.defineCommand('waitgateBenchBulkEnter', { lua: BULK_ENTER_LUA, numberOfKeys: 3 });
  }
  let entered = 0;
  let next = 0;
  const worker = async () => {
    while (next < memberIds.length) {
      const slice = memberIds.slice(next, (next += batch));
      entered += await client.waitgateBenchBulkEnter(k.waiting, k.tokens, k.meta, ...slice);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return entered;
}

/** A bare sorted set of the same ids, as the naive design keeps it (ZADD, score = a millisecond timestamp). */
export async function bulkZadd(client, key, memberIds, { batch = 1000, inFlight = 4 } = {}) {
  let next = 0;
  const base = Date.now();
  const worker = async () => {
    while (next < memberIds.length) {
      const from = next;
      const slice = memberIds.slice(from, (next += batch));
      const args = [];
      slice.forEach((m, i) => args.push(base + from + i, m));
      await client.zadd(key, ...args);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** Runs `op(i)` for i in [0, n) with `concurrency` calls in flight. */
export async function forEachConcurrent(n, concurrency, op) {
  let next = 0;
  const worker = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

/**
 * A member's draw in a shuffled pre-queue, as lua/includes/controls.lua (and drawScore
 * in src/controls.ts, not exported) compute it: the first 40 bits of
 * SHA-1(`<seed hex>:<member id>`).
 */
export function drawOf(seedHex, memberId) {
  return parseInt(createHash('sha1').update(`${seedHex}:${memberId}`).digest('hex').slice(0, 10), 16);
}

/**
 * Pre-queues `memberIds` into queue `name`, whose shuffled opening must be pending
 * (`setControls({ opensAt, shuffle: true })` made the band `pb` and the seed `cd` in
 * meta): each member is ZADDed (NX) with the score enterIfAbsent gives a new member
 * before opensAt, `pb + draw`, and meta's `seq` grows by the number added, as that many
 * real enters would leave it. Plain ZADD/HINCRBY commands, no script, so they never
 * count as a waitgate script call in SLOWLOG. The ids must be fresh (no token, not
 * waiting). Throws if the opening is not pending, or passed during the load.
 * @returns {{ added: number, pb: number, seed: string, draws: Float64Array }} draws[i] is memberIds[i]'s draw
 */
export async function bulkPreQueue(client, name, memberIds, { batch = 1000, inFlight = 4 } = {}) {
  const k = queueKeys(name);
  const opensAt = async () => Number((await client.hget(k.meta, 'co')) ?? NaN);
  const redisNow = async () => {
    const [s, us] = await client.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  const [pbRaw, cs, seed] = await client.hmget(k.meta, 'pb', 'cs', 'cd');
  if (pbRaw === null || cs !== '1' || !/^[0-9a-f]{64}$/.test(seed ?? '') || !((await redisNow()) < (await opensAt()))) {
    throw new Error(`bulkPreQueue: queue ${name} has no pending shuffled opening (setControls({ opensAt: <future>, shuffle: true }) first)`);
  }
  const pb = Number(pbRaw);
  const draws = new Float64Array(memberIds.length);
  let added = 0;
  let next = 0;
  const worker = async () => {
    while (next < memberIds.length) {
      const from = next;
      const to = Math.min(memberIds.length, (next += batch));
      const args = [];
      for (let i = from; i < to; i++) {
        const d = drawOf(seed, memberIds[i]);
        draws[i] = d;
        args.push(pb + d, memberIds[i]);
      }
      const n = await client.zadd(k.waiting, 'NX', ...args);
      if (n > 0) await client.hincrby(k.meta, 'seq', n);
      added += n;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  if (!((await redisNow()) < (await opensAt()))) throw new Error(`bulkPreQueue: the opening of ${name} passed during the load (set opensAt further ahead)`);
  return { added, pb, seed, draws };
}
