// Presence (abandonAfterSeconds) for members loaded in bulk.
//
// bench/lib/bulk-enter.mjs writes what enterIfAbsent writes for a member far from the
// head, and nothing in `{prefix:name}:seen`. With abandonment on, a member with no
// `seen` entry is dropped when its turn comes, so a bench that loads in bulk and then
// admits must give the head its presence: the entries the enter script (rank below the
// presence head) and the touch calls of polls would have left. fillSeen writes them as
// those scripts do: one hash field per member, its value Redis' clock in milliseconds.

/** The queue's `seen` hash (src/store/keys.ts). */
export const seenKey = (name, prefix = 'waitgate') => `{${prefix}:${name}}:seen`;

/**
 * The presence head of a queue's options as WaitingQueue computes it (#presenceHead):
 * ceil(2 × (burst + rate × abandonAfterSeconds)); null when abandonment is off.
 * @param {{ admitRatePerSecond: number, admitBurst: number, abandonAfterMs: number | null }} config `queue.config`
 */
export function presenceHeadOf(config) {
  if (config.abandonAfterMs === null || config.abandonAfterMs === undefined) return null;
  return Math.ceil(2 * (config.admitBurst + (config.admitRatePerSecond * config.abandonAfterMs) / 1000));
}

/** Sets `seen` to Redis' time (ms) for `memberIds`, `batch` per HSET, a few in flight. */
export async function fillSeen(client, name, memberIds, { batch = 1000, inFlight = 4 } = {}) {
  const [s, us] = await client.time();
  const now = String(Number(s) * 1000 + Math.floor(Number(us) / 1000));
  const key = seenKey(name);
  let next = 0;
  const worker = async () => {
    while (next < memberIds.length) {
      const slice = memberIds.slice(next, (next += batch));
      const args = [];
      for (const m of slice) args.push(m, now);
      await client.hset(key, ...args);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}
