// Signed entry passes (SPEC §15): what a forged pass costs. Forged passes rejected per second by
// the Express guard (requireEntryToken over real HTTP, keep-alive, concurrency 32) on a queue
// with `signing` (one forged pass replayed, and distinct forged passes each new to the guard)
// vs an opaque token of the same queue without it (which goes to Redis), a bare 401 route on
// the same client as the HTTP floor, and the
// Redis commands per rejection (INFO commandstats); verifyEntryPass's cost per pass (µs,
// sequential); the signed path's enter → READY → claim → consume throughput vs the opaque one
// (queue API, the queue's own admitter, concurrency 32). Medians of interleaved rounds.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { SignJWT, decodeJwt, importPKCS8 } from 'jose';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { requireEntryToken } from 'waitgate/express';
import { verifyEntryPass } from 'waitgate/pass';
import { commandStats, countCommands, diffStats } from '../lib/redis-info.mjs';
import { median, round } from '../lib/stats.mjs';

const CONCURRENCY = 32;
/** Distinct forged passes the guard is sent in turn (more than it remembers refusals of: src/signing/pass-signatures.ts). */
const FORGED_POOL = 5000;
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

/**
 * Warms each op, then runs them all in `rounds` interleaved rounds (the order reversed every
 * other round, so drift falls on every op alike). Per op: its rate in each round (`measure`,
 * default throughput), and its per-round ratio to the `baseline` op.
 */
async function interleaved(ops, { rounds, roundMs, baseline, measure = (_name, op) => throughput(op, roundMs) }) {
  const names = Object.keys(ops);
  for (const name of names) await throughput(ops[name], Math.min(roundMs, 300)); // warm
  const rates = Object.fromEntries(names.map((name) => [name, []]));
  const ratios = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    const perRound = {};
    for (const name of r % 2 ? [...names].reverse() : names) rates[name].push((perRound[name] = await measure(name, ops[name])));
    for (const name of names) ratios[name].push(perRound[name] / perRound[baseline]);
  }
  return { rates, ratios };
}

/** The median of each series, rounded to `digits`, under its name (or the name `renamed` gives it). */
function medians(series, digits, renamed = {}) {
  return Object.fromEntries(Object.entries(series).map(([name, values]) => [renamed[name] ?? name, round(median(values), digits)]));
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

/** The HTTP floor: an Express app whose POST /orders answers 401 at once, the same client. */
async function serveFloor() {
  const app = express();
  app.post('/orders', (_req, res) => res.status(401).json({ error: { code: 'ENTRY_TOKEN_INVALID' } }));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}/orders`, close: () => new Promise((r) => server.close(r)) };
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
  const forgerPem = pem();
  const forger = new WaitingQueue({
    store: new RedisStore({ client: wg, prefix: `bf${randomBytes(3).toString('hex')}` }),
    name: 'drop',
    signing: { keys: [{ kid: 'k', privateKey: forgerPem }] },
    ...fast,
  });
  const forged = await admittedToken(forger, 'm');
  // A flood of distinct forged passes (each one new to the guard, so each costs a verify).
  const forgerKey = await importPKCS8(forgerPem, 'ES256');
  const claims = decodeJwt(forged);
  const distinct = [];
  for (let i = 0; i < FORGED_POOL; i++) {
    const jti = randomBytes(32).toString('base64url').slice(0, 43);
    distinct.push(await new SignJWT({ ...claims, jti }).setProtectedHeader({ alg: 'ES256', kid: 'k', typ: 'JWT' }).sign(forgerKey));
  }
  const guessed = randomBytes(32).toString('base64url'); // an opaque token nobody was given
  const guards = { signed: await serveGuard(signed), opaque: await serveGuard(opaque), floor: await serveFloor() };
  const reject = (guard, tokens) => async (i) => {
    const response = await fetch(guard.url, { method: 'POST', headers: { 'x-member-id': 'm', 'x-entry-token': tokens[i % tokens.length] } });
    if (response.status !== 401) throw new Error(`expected 401, got ${response.status}`);
    await response.arrayBuffer();
  };
  const rejectors = {
    signed: reject(guards.signed, [forged]),
    signedDistinct: reject(guards.signed, distinct),
    opaque: reject(guards.opaque, [guessed]),
    floor: reject(guards.floor, [guessed]),
  };
  const commands = { signed: [], signedDistinct: [], opaque: [], floor: [] };
  const rejected = await interleaved(rejectors, {
    rounds,
    roundMs,
    baseline: 'opaque',
    // Each round also counts the Redis commands the refusals sent (INFO commandstats).
    async measure(name, op) {
      const before = await commandStats(control);
      let calls = 0;
      const rate = await throughput(async (i) => void (await op(i), calls++), roundMs);
      commands[name].push(countCommands(diffStats(before, await commandStats(control))).all / calls); // INFO itself is left out
      return rate;
    },
  });

  // The guard's own check without HTTP: queue.claim of a forged pass (refused before any store
  // call) vs a guessed opaque token (refused by the store), at the same concurrency.
  const claimRejects = (queue, tokens) => async (i) => {
    const refused = await queue.claim('m', tokens[i % tokens.length]).then(
      () => false,
      (error) => error.code === 'INVALID',
    );
    if (!refused) throw new Error('expected INVALID');
  };
  const checks = { signed: claimRejects(signed, [forged]), signedDistinct: claimRejects(signed, distinct), opaque: claimRejects(opaque, [guessed]) };
  const checked = await interleaved(checks, { rounds, roundMs, baseline: 'opaque' });

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

  // A member's whole path, signed vs opaque, interleaved, as a shop runs it: each queue's admitter
  // (startAdmitter, every 5 ms, both throughout) admits; each member enters,
  // polls until READY (its pass, signed when it first reads it), claims and consumes.
  let next = 0;
  const lifecycle = (queue) => async () => {
    const m = `l${next++}`;
    await queue.enter(m);
    let token;
    while (!(token = (await queue.position(m)).entryToken)) await sleep(2);
    await queue.consume(await queue.claim(m, token));
  };
  const admitters = [signed, opaque].map((queue) => queue.startAdmitter({ intervalMs: 5 }));
  const cycles = await interleaved({ signed: lifecycle(signed), opaque: lifecycle(opaque) }, { rounds, roundMs, baseline: 'opaque' });
  for (const admitter of admitters) await admitter.stop();

  for (const guard of Object.values(guards)) await guard.close();
  wg.disconnect();
  control.disconnect();
  const result = {
    settings: { rounds, roundMs, concurrency: CONCURRENCY },
    forgedRejectedPerSecond: {
      ...medians(rejected.rates, 0, { floor: 'httpFloor' }),
      ratio: round(median(rejected.ratios.signed)),
      distinctRatio: round(median(rejected.ratios.signedDistinct)),
    },
    forgedRefusedPerSecondWithoutHttp: {
      ...medians(checked.rates, 0),
      ratio: round(median(checked.ratios.signed)),
      distinctRatio: round(median(checked.ratios.signedDistinct)),
    },
    redisCommandsPerRejection: medians({ signed: commands.signed, signedDistinct: commands.signedDistinct, opaque: commands.opaque }, 3),
    verifyMicrosecondsPerPass: round(median(verifyUs), 1),
    lifecyclePerSecond: { ...medians(cycles.rates, 0), ratio: round(median(cycles.ratios.signed)) },
  };
  const f = result.forgedRejectedPerSecond;
  log(
    `  forged passes rejected/s by the Express guard: one forged pass replayed ${f.signed}, distinct forged passes ${f.signedDistinct}, opaque ${f.opaque} (ratios ${f.ratio}x and ${f.distinctRatio}x; goal >= 10x); a bare 401 route (the HTTP floor) ${f.httpFloor}`,
  );
  const c = result.forgedRefusedPerSecondWithoutHttp;
  log(
    `  the same refusals without HTTP (queue.claim): replayed ${c.signed}, distinct ${c.signedDistinct}, opaque ${c.opaque} (ratios ${c.ratio}x and ${c.distinctRatio}x)`,
  );
  log(`  Redis commands per rejection: signed ${result.redisCommandsPerRejection.signed}, opaque ${result.redisCommandsPerRejection.opaque} (goal: signed 0)`);
  log(`  verifyEntryPass: ${result.verifyMicrosecondsPerPass} µs per pass (ES256)`);
  log(
    `  enter/READY/claim/consume per second: signed ${result.lifecyclePerSecond.signed}, opaque ${result.lifecyclePerSecond.opaque} (ratio ${result.lifecyclePerSecond.ratio}; goal >= 0.9)`,
  );
  return result;
}
