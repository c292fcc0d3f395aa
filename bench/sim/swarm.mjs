// The bot swarm (npm run simulate:bots, SPEC §17): humans and scripted clients in one Node
// process hitting the example shop over real HTTP, each class on its own keep-alive sockets, one
// per clientsPerSocket clients (a bot's request waits for a bot socket, never in front of a
// human's; when the shop is the bottleneck each class gets service in proportion to its
// clients, as if each had its own connection; a client's enter goes
// before its class's polls, so a bot's arrival is not delayed behind 50,000 polls). Every client keeps
// its own `shopper` cookie (member ids h-<i> and b-<j>: the shop counts store calls per class
// by the prefix) and an account in `x-account` (humans one each, bots a few shared).
//
//  - A human arrives at a random moment of the arrival window, enters; on 401
//    CHALLENGE_REQUIRED it solves the proof of work with waitgate/client's solver (what the
//    waiting room runs) after the time a browser would take, then enters with the solution;
//    polls at the interval the queue hints (±20%), orders once READY.
//  - A bot arrives the same way, hammers enter (again after botRetryMs on any refusal: 401,
//    409 IDENTITY_LIMIT, 503), polls every botPollMs, orders once READY. With botsSolve, a
//    challenge goes to the bot farm: one queue of work at botHashesPerSecond for the whole
//    swarm; the bot enters with the solution once its turn on the farm is done.
//
// The work of a challenge is modelled, not spent: the gate runs at difficulty / powScale
// (a real challenge, solved for real, in a few hashes), and the solver waits as long as
// U(0, maxnumber × powScale) tries would take at its hash rate. Stops at horizonSeconds
// and reports over IPC. Started by bench/simulate-bots.mjs with fork().

import { performance } from 'node:perf_hooks';
import { solvePowChallenge } from 'waitgate/client';
import { createHttpClient } from '../lib/http-client.mjs';
import { sendAndExit } from '../lib/ipc.mjs';
import { mulberry32 } from '../lib/seeded-random.mjs';

const config = JSON.parse(process.env.SIM_CONFIG);
const port = Number(process.env.SHOP_PORT);
const socketsFor = (clients) => Math.max(1, Math.ceil(clients / config.clientsPerSocket));
const http = { h: createHttpClient({ port, sockets: socketsFor(config.humans) }), b: createHttpClient({ port, sockets: socketsFor(config.bots) }) };
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const clientRandom = (cls, i) => mulberry32((config.seed ^ Math.imul(i + 1, 2654435761) ^ (cls === 'b' ? 0x9e3779b9 : 0)) >>> 0);

let t0 = 0;
let stopped = false;
const requests = { h: {}, b: {} }; // class -> 'METHOD path status' -> count
const humans = []; // per human: [arrivedAt, enteredAt, readyAt, orderedAt, lastRank, solveMs] (epoch ms; null: not reached)
const bots = { entered: 0, ready: 0, ordered: 0, solved: 0 };
let farmFreeAt = 0;

/** One request of a client of class `cls`; its enters go before its class's polls (urgent), as if on a connection of their own. */
async function call(cls, method, path, headers, body) {
  const res = await http[cls].request(method, path, { headers, body, urgent: path === '/queue/enter' });
  const key = `${method} ${path} ${res.status}`;
  requests[cls][key] = (requests[cls][key] ?? 0) + 1;
  return res;
}

/** A solution of `challenge` once the modelled work is done: at `hashesPerSecond` of its own, or on the bot farm. */
async function solve(challenge, rng, { hashesPerSecond, farm }) {
  const tries = rng() * (challenge.maxnumber + 1) * config.powScale;
  const ms = (tries / hashesPerSecond) * 1000;
  if (farm) {
    farmFreeAt = Math.max(Date.now(), farmFreeAt) + ms;
    await sleep(farmFreeAt - Date.now());
  } else await sleep(ms);
  return solvePowChallenge(challenge);
}

const isPow = (c) => c?.kind === 'pow';

/** What a human does differently from a bot: its account, its proof of work, its pace. */
const PROFILES = {
  h: (i) => ({
    account: `person-${i}`,
    solver: { hashesPerSecond: config.humanHashesPerSecond },
    retryMs: (rng) => 1000 + rng() * 1000,
    pollMs: (p, rng) => p.pollingIntervalSeconds * 1000 * (0.8 + 0.4 * rng()),
  }),
  b: (j) => ({
    account: `bot-${j % config.botAccounts}`,
    solver: config.botsSolve ? { hashesPerSecond: config.botHashesPerSecond, farm: true } : null,
    retryMs: (rng) => config.botRetryMs * (0.5 + rng()),
    pollMs: (_p, rng) => config.botPollMs * (0.5 + rng()),
  }),
};

/**
 * One client of class `cls` ('h' human, 'b' bot): enters (solving a challenge if its profile
 * can, else retrying), polls until READY, orders. `me`: [arrivedAt, enteredAt, readyAt,
 * orderedAt, lastRank, solveMs] (epoch ms; null: not reached).
 */
async function client(cls, i) {
  const rng = clientRandom(cls, i);
  const profile = PROFILES[cls](i);
  const headers = { cookie: `shopper=${cls}-${i}`, 'x-account': profile.account };
  const me = [Date.now(), null, null, null, null, 0];
  if (cls === 'h') humans[i] = me;
  let p = null;
  let proof = {};
  while (!stopped && !p) {
    const res = await call(cls, 'POST', '/queue/enter', { ...headers, ...proof });
    proof = {};
    if (res.status === 200) p = res.body;
    else if (res.status === 401 && profile.solver && isPow(res.body?.error?.challenge)) {
      const challenge = res.body.error.challenge;
      const started = Date.now();
      proof = { [challenge.header]: await solve(challenge, rng, profile.solver) };
      me[5] += Date.now() - started;
      if (cls === 'b') bots.solved++;
    } else await sleep(profile.retryMs(rng));
  }
  if (!p) return;
  me[1] = Date.now();
  if (cls === 'b') bots.entered++;
  while (!stopped && p.status === 'WAITING') {
    me[4] = p.rank;
    await sleep(profile.pollMs(p, rng));
    if (stopped) return;
    const res = await call(cls, 'GET', '/queue/position', headers);
    if (res.status === 200) p = res.body;
  }
  if (p.status !== 'READY') return;
  me[2] = Date.now();
  if (cls === 'b') bots.ready++;
  const res = await call(cls, 'POST', '/api/orders', { ...headers, 'x-entry-token': p.entryToken }, { productId: 1 + (i % 3) });
  if (res.status !== 201) return;
  me[3] = Date.now();
  if (cls === 'b') bots.ordered++;
}

/** Everyone's arrival, uniform over the window (seeded), then the horizon. */
async function go() {
  const arrivals = mulberry32(config.seed);
  const window = config.arrivalSeconds * 1000;
  for (let i = 0; i < config.humans; i++) setTimeout(() => void client('h', i), t0 + arrivals() * window - Date.now());
  for (let j = 0; j < config.bots; j++) setTimeout(() => void client('b', j), t0 + arrivals() * window - Date.now());
  const lag = { max: 0, expected: performance.now() + 100 };
  const lagTimer = setInterval(() => {
    const now = performance.now();
    lag.max = Math.max(lag.max, now - lag.expected);
    lag.expected = now + 100;
  }, 100);
  const queuedMax = { h: 0, b: 0 };
  const queueTimer = setInterval(() => {
    for (const cls of ['h', 'b']) queuedMax[cls] = Math.max(queuedMax[cls], http[cls].queued());
  }, 250);
  await sleep(t0 + config.horizonSeconds * 1000 - Date.now());
  stopped = true;
  clearInterval(lagTimer);
  clearInterval(queueTimer);
  const cpu = process.cpuUsage();
  await sendAndExit({
    type: 'result',
    humans,
    bots,
    requests,
    swarm: { cpuSeconds: (cpu.user + cpu.system) / 1e6, eventLoopLagMaxMs: Math.round(lag.max), agentQueuedMax: queuedMax, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) },
  });
}

process.on('message', (message) => {
  if (message.type !== 'go') return;
  t0 = message.t0;
  void go();
});
process.on('disconnect', () => process.exit(1));
process.send({ type: 'ready' });
