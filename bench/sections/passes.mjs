// Signed entry passes (SPEC §15): what a forged pass costs. Forged passes rejected per second by
// the Express guard (requireEntryToken over real HTTP, keep-alive, concurrency 32) on a queue
// with `signing` vs an opaque token of the same queue without it (which goes to Redis), and the
// Redis commands per rejection (INFO commandstats); verifyEntryPass's cost per pass (µs,
// sequential); the signed path's enter/claim/consume throughput vs the opaque one (queue API,
// concurrency 32). Medians of interleaved rounds.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { requireEntryToken } from 'waitgate/express';
import { verifyEntryPass } from 'waitgate/pass';
import { commandStats, countCommands, diffStats } from '../lib/redis-info.mjs';
import { median, round } from '../lib/stats.mjs';

const CONCURRENCY = 32;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pem = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' });

/** Runs `op(i)` at CONCURRENCY for `ms`; operations per second. */
async function throughput(op, ms) {
  let n = 0;
  const end = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await op(n++);
    }),
  );
  return (n / (performance.now() - started)) * 1000;
}

/** Member `m` entered and admitted: its pass (or opaque token), read from its position (a concurrent admit() may have admitted it). */
async function admittedToken(queue, m) {
  await queue.enter(m);
  for (;;) {
    await queue.admit();
    const { entryToken } = await queue.position(m);
    if (entryToken) return entryToken;
    await sleep(11);
  }
}

/** An Express app guarding POST /orders; its URL. */
async function serveGuard(queue) {
  const app = express();
  app.post('/orders', requireEntryToken(queue, { memberId: (req) => req.get('x-member-id') }), (_req, res) => res.status(201).end());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}/orders`, close: () => new Promise((r) => server.close(r)) };
}

export async function runPasses({ url, rounds, roundMs, log }) {
  const wg = new Redis(url);
  const control = new Redis(url);
  const fast = { admitRatePerSecond: 1_000_000, admitBurst: 10_000, abandonAfterSeconds: null, operationTimeoutMs: 10_000 };
  const signing = { keys: [{ kid: 'k', privateKey: pem() }] };
  const signed = new WaitingQueue({ store: new RedisStore({ client: wg, prefix: `bp${randomBytes(3).toString('hex')}` }), name: 'drop', signing, ...fast });
  const opaque = new WaitingQueue({ store: new RedisStore({ client: wg, prefix: `bo${randomBytes(3).toString('hex')}` }), name: 'drop', ...fast });
  // Forged: a pass of the same shape, signed by a key the queue does not list (same kid).
  const forger = new WaitingQueue({ store: new RedisStore({ client: wg, prefix: `bf${randomBytes(3).toString('hex')}` }), name: 'drop', signing: { keys: [{ kid: 'k', privateKey: pem() }] }, ...fast });
  const forged = await admittedToken(forger, 'm');
  const guessed = randomBytes(32).toString('base64url'); // an opaque token nobody was given
  const guards = { signed: await serveGuard(signed), opaque: await serveGuard(opaque) };
  const reject = (guard, token) => async () => {
    const response = await fetch(guard.url, { method: 'POST', headers: { 'x-member-id': 'm', 'x-entry-token': token } });
    if (response.status !== 401) throw new Error(`expected 401, got ${response.status}`);
    await response.arrayBuffer();
  };
  const rejectors = { signed: reject(guards.signed, forged), opaque: reject(guards.opaque, guessed) };

  const rejected = { signed: [], opaque: [], ratio: [] };
  const commands = { signed: [], opaque: [] };
  for (const name of ['signed', 'opaque']) await throughput(rejectors[name], Math.min(roundMs, 300)); // warm
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['opaque', 'signed'] : ['signed', 'opaque'];
    const perRound = {};
    for (const name of order) {
      const before = await commandStats(control);
      let calls = 0;
      const counted = async () => void (await rejectors[name](), calls++);
      perRound[name] = await throughput(counted, roundMs);
      const sent = countCommands(diffStats(before, await commandStats(control))).all; // INFO itself is left out
      commands[name].push(sent / calls);
      rejected[name].push(perRound[name]);
    }
    rejected.ratio.push(perRound.signed / perRound.opaque);
  }

  // verifyEntryPass per pass, sequential (no concurrency: the CPU cost of one check).
  const pass = await admittedToken(signed, 'v');
  const options = { keys: signed.jwks(), queue: 'drop' };
  for (let i = 0; i < 200; i++) await verifyEntryPass(pass, options);
  const verifyUs = [];
  for (let r = 0; r < rounds; r++) {
    const n = 2000;
    const t = performance.now();
    for (let i = 0; i < n; i++) await verifyEntryPass(pass, options);
    verifyUs.push(((performance.now() - t) * 1000) / n);
  }

  // enter → admit → claim → consume per member, signed vs opaque, interleaved.
  let next = 0;
  const lifecycle = (queue) => async () => {
    const m = `l${next++}`;
    const token = await admittedToken(queue, m);
    await queue.consume(await queue.claim(m, token));
  };
  const cycles = { signed: [], opaque: [], ratio: [] };
  for (const q of [signed, opaque]) await throughput(lifecycle(q), Math.min(roundMs, 300));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['opaque', 'signed'] : ['signed', 'opaque'];
    const perRound = {};
    for (const name of order) perRound[name] = await throughput(lifecycle(name === 'signed' ? signed : opaque), roundMs);
    cycles.signed.push(perRound.signed);
    cycles.opaque.push(perRound.opaque);
    cycles.ratio.push(perRound.signed / perRound.opaque);
  }

  await guards.signed.close();
  await guards.opaque.close();
  wg.disconnect();
  control.disconnect();
  const result = {
    settings: { rounds, roundMs, concurrency: CONCURRENCY },
    forgedRejectedPerSecond: { signed: round(median(rejected.signed), 0), opaque: round(median(rejected.opaque), 0), ratio: round(median(rejected.ratio)) },
    redisCommandsPerRejection: { signed: round(median(commands.signed), 3), opaque: round(median(commands.opaque), 3) },
    verifyMicrosecondsPerPass: round(median(verifyUs), 1),
    lifecyclePerSecond: { signed: round(median(cycles.signed), 0), opaque: round(median(cycles.opaque), 0), ratio: round(median(cycles.ratio)) },
  };
  log(`  forged passes rejected/s by the Express guard: signed ${result.forgedRejectedPerSecond.signed}, opaque ${result.forgedRejectedPerSecond.opaque} (ratio ${result.forgedRejectedPerSecond.ratio}x; goal >= 10x)`);
  log(`  Redis commands per rejection: signed ${result.redisCommandsPerRejection.signed}, opaque ${result.redisCommandsPerRejection.opaque} (goal: signed 0)`);
  log(`  verifyEntryPass: ${result.verifyMicrosecondsPerPass} µs per pass (ES256)`);
  log(`  enter/admit/claim/consume per second: signed ${result.lifecyclePerSecond.signed}, opaque ${result.lifecyclePerSecond.opaque} (ratio ${result.lifecyclePerSecond.ratio}; goal >= 0.9)`);
  return result;
}
