// A child process of test/faults/multi-process.test.ts: its own WaitingQueue on its own
// connection, calling admit() in a loop, printing each admission as a JSON line.
//   node multi-admitter.mjs <redisUrl> <queue> <durationMs> <mode: admit|churn> [maxActive]
// In churn mode it also claims each admitted token and then consumes, releases, or
// abandons it (the lease and the short token TTL free abandoned ones).
// With WAITGATE_TEST_SIGNING set (a JSON `signing` option, the same keys in every process of
// one queue) the queue issues signed entry passes (SPEC §15); each admission line then says
// whether its token looked like a compact JWS, and each consume line whether a second claim
// with the consumed token was refused (single use).
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';

const [url, name, durationMs, mode, maxActive] = process.argv.slice(2);
const client = new Redis(url, { maxRetriesPerRequest: 1 });
const churn = mode === 'churn';
const signing = process.env.WAITGATE_TEST_SIGNING ? JSON.parse(process.env.WAITGATE_TEST_SIGNING) : undefined;
const queue = new WaitingQueue({
  store: new RedisStore({ client }),
  name,
  admitRatePerSecond: 50,
  admitBurst: 50,
  maxActive: maxActive ? Number(maxActive) : null,
  entryTokenTtlSeconds: churn ? 1 : 60,
  claimTtlSeconds: 1,
  ...(signing ? { signing } : {}),
});
const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/; // test/support/signing-keys.ts COMPACT_JWS (this child runs plain JavaScript)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);

const until = Date.now() + Number(durationMs);
let errors = 0;
while (Date.now() < until) {
  try {
    const admissions = await queue.admit();
    for (const a of admissions) out({ kind: 'admitted', memberId: a.memberId, expiresAt: a.expiresAt, jws: COMPACT_JWS.test(a.entryToken) });
    if (churn) {
      await Promise.all(
        admissions.map(async (a) => {
          const roll = Math.random();
          if (roll < 0.2) return; // never claimed: expires
          const claim = await queue.claim(a.memberId, a.entryToken);
          await sleep(Math.random() * 200);
          if (roll < 0.6) {
            const ok = await queue.consume(claim);
            // The consumed token must not be claimable again, from this or any process.
            const again = ok
              ? await queue.claim(a.memberId, a.entryToken).then(
                  () => 'CLAIMED',
                  (error) => error.code,
                )
              : null;
            out({ kind: 'consumed', memberId: a.memberId, ok, again });
          } else if (roll < 0.8) await queue.release(claim);
          // else: abandoned mid-claim, the lease lapses
        }),
      );
    }
  } catch (error) {
    errors++;
    out({ kind: 'error', message: error.message });
  }
  await sleep(5 + Math.random() * 20);
}
out({ kind: 'done', errors });
client.disconnect();
