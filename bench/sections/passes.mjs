// Signed entry passes (SPEC §15): what a forged pass costs. Forged passes rejected per second by
// the Express guard (requireEntryToken over real HTTP, keep-alive, concurrency 32) on a queue
// with `signing` (one forged pass replayed, and distinct forged passes each new to the guard)
// vs an opaque token of the same queue without it (which goes to Redis), a bare 401 route on
// the same client as the HTTP floor, and the
// Redis commands per rejection (INFO commandstats); verifyEntryPass's cost per pass (µs,
// sequential); the signed path's enter/claim/consume throughput vs the opaque one (queue API,
// concurrency 32). Medians of interleaved rounds.

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
  const names = Object.keys(rejectors);

  const rejected = { signed: [], signedDistinct: [], opaque: [], floor: [], ratio: [], distinctRatio: [] };
  const commands = { signed: [], signedDistinct: [], opaque: [], floor: [] };
  for (const name of names) await throughput(rejectors[name], Math.min(roundMs, 300)); // warm
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...names].reverse() : names;
    const perRound = {};
    for (const name of order) {
      const before = await commandStats(control);
      let calls = 0;
      const counted = async (i) => void (await rejectors[name](i), calls++);
      perRound[name] = await throughput(counted, roundMs);
      const sent = countCommands(diffStats(before, await commandStats(control))).all; // INFO itself is left out
      commands[name].push(sent / calls);
      rejected[name].push(perRound[name]);
    }
    rejected.ratio.push(perRound.signed / perRound.opaque);
    rejected.distinctRatio.push(perRound.signedDistinct / perRound.opaque);
  }

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
  const checked = { signed: [], signedDistinct: [], opaque: [], ratio: [], distinctRatio: [] };
  for (const name of Object.keys(checks)) await throughput(checks[name], Math.min(roundMs, 300)); // warm
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['opaque', 'signedDistinct', 'signed'] : ['signed', 'signedDistinct', 'opaque'];
    const perRound = {};
    for (const name of order) checked[name].push((perRound[name] = await throughput(checks[name], roundMs)));
    checked.ratio.push(perRound.signed / perRound.opaque);
    checked.distinctRatio.push(perRound.signedDistinct / perRound.opaque);
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

  for (const guard of Object.values(guards)) await guard.close();
  wg.disconnect();
  control.disconnect();
  const result = {
    settings: { rounds, roundMs, concurrency: CONCURRENCY },
    forgedRejectedPerSecond: {
      signed: round(median(rejected.signed), 0),
      signedDistinct: round(median(rejected.signedDistinct), 0),
      opaque: round(median(rejected.opaque), 0),
      httpFloor: round(median(rejected.floor), 0),
      ratio: round(median(rejected.ratio)),
      distinctRatio: round(median(rejected.distinctRatio)),
    },
    forgedRefusedPerSecondWithoutHttp: {
      signed: round(median(checked.signed), 0),
      signedDistinct: round(median(checked.signedDistinct), 0),
      opaque: round(median(checked.opaque), 0),
      ratio: round(median(checked.ratio)),
      distinctRatio: round(median(checked.distinctRatio)),
    },
    redisCommandsPerRejection: {
      signed: round(median(commands.signed), 3),
      signedDistinct: round(median(commands.signedDistinct), 3),
      opaque: round(median(commands.opaque), 3),
    },
    verifyMicrosecondsPerPass: round(median(verifyUs), 1),
    lifecyclePerSecond: { signed: round(median(cycles.signed), 0), opaque: round(median(cycles.opaque), 0), ratio: round(median(cycles.ratio)) },
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
    `  enter/admit/claim/consume per second: signed ${result.lifecyclePerSecond.signed}, opaque ${result.lifecyclePerSecond.opaque} (ratio ${result.lifecyclePerSecond.ratio}; goal >= 0.9)`,
  );
  return result;
}
