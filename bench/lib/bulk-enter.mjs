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
