// The example shop (examples/express-shop/app.mjs, unchanged) in its own process, on a
// RedisStore, instrumented from the outside for the flash-crowd simulation:
//  - a recording Store around RedisStore: each member's entry sequence (FIFO check) and
//    the admission order;
//  - a WaitingQueue subclass counting order transactions in flight (claim -> consume/release);
//  - the order database (libsql) behind a Proxy counting transactions in flight;
//  - queue.stats() sampled every second;
//  - the bot swarm (bench/simulate-bots.mjs): a powGate (config.gate) and an identity read from a
//    request header (config.identityHeader) on the queue routes, when this build of waitgate
//    accepts the option (reported in the `ready` message); store calls counted per client class
//    (config.countByClass: the member id's prefix before '-', e.g. h-12 and b-7);
//  - setControls on the orchestrator's word (`controls` messages: a rate change mid-sale);
//  - each admission step's admitted and dropped (abandoned) members, with the time: the
//    admitted are sent to the orchestrator at once (`admitted` messages), which passes
//    them on to the shoppers (a shopper who never comes back goes at its admission).
// Started by bench/simulate.mjs with fork(); talks to it over IPC.

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { sendAndExit } from '../lib/ipc.mjs';
import { powGate } from 'waitgate/gate';
import { createShop } from '../../examples/express-shop/app.mjs';
import { openDatabase } from '../../examples/express-shop/db.mjs';

const config = JSON.parse(process.env.SIM_CONFIG);
const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 2000 });

// ---- recording store
const seqOf = new Map(); // member -> entry sequence (first seen while WAITING)
const admittedOrder = []; // member ids in admission order
const admittedAt = []; // epoch ms of each, same order
const dropped = []; // [member id, epoch ms]: dropped as abandoned by an admission step
let fifoViolations = 0;
let lastAdmittedSeq = -Infinity;
const admittedSeqAt = []; // [entry sequence, epoch ms] of each admission with a known sequence
const overtaken = []; // [member id, ms]: each member admitted after one who entered later, and how long after the first such admission
let heldMax = 0; // the most members one admission step held at the head (holdSilentAfterSeconds)
let heldSteps = 0; // admission steps that held anyone
const inner = new RedisStore({ client: redis });
const storeCalls = {}; // by method: one Redis script call each
const storeCallsByClass = {}; // class -> method -> calls (config.countByClass)
const count = (m, member) => {
  storeCalls[m] = (storeCalls[m] ?? 0) + 1;
  if (!config.countByClass) return;
  const id = typeof member === 'string' ? member : member?.memberId;
  const byMethod = (storeCallsByClass[typeof id === 'string' && id.includes('-') ? id.slice(0, id.indexOf('-')) : 'shared'] ??= {});
  byMethod[m] = (byMethod[m] ?? 0) + 1;
};
const store = {
  async enter(queue, memberId, options) {
    count('enter', memberId);
    const s = await inner.enter(queue, memberId, options); // options: the deadline, the presence head, a passthrough token
    if (s.status === 'WAITING' && s.score !== null && s.score !== undefined) seqOf.set(memberId, s.score);
    return s;
  },
  async admit(queue, request) {
    count('admit');
    const result = await inner.admit(queue, request);
    const at = Date.now();
    if (result.admitted.length > 0) process.send({ type: 'admitted', ids: result.admitted.map((a) => a.memberId), at });
    for (const memberId of result.abandoned ?? []) dropped.push([memberId, at]);
    if (result.held) {
      heldSteps++;
      heldMax = Math.max(heldMax, result.held);
    }
    for (const { memberId } of result.admitted) {
      admittedAt.push(at);
      admittedOrder.push(memberId);
      const seq = seqOf.get(memberId);
      if (seq !== undefined) {
        if (seq <= lastAdmittedSeq) {
          fifoViolations++;
          let firstLater = at;
          for (const [s, a] of admittedSeqAt) if (s > seq && a < firstLater) firstLater = a;
          overtaken.push([memberId, at - firstLater]);
        }
        lastAdmittedSeq = Math.max(lastAdmittedSeq, seq);
        admittedSeqAt.push([seq, at]);
      }
    }
    return result;
  },
};
for (const m of [
  'position',
  'claim',
  'consume',
  'release',
  'leave',
  'stats',
  'queueSnapshot',
  'acceptCurrentState',
  'warnings',
  'touch',
  'setControls',
  'controls',
]) {
  if (typeof inner[m] === 'function') store[m] = (...args) => (count(m, args[1]), inner[m](...args));
}

// ---- order transactions in flight: from a successful claim to its consume or release
let ordersInFlight = 0;
let binMaxOrdersInFlight = 0;
let maxOrdersInFlight = 0;
let orders = 0;
class InstrumentedQueue extends WaitingQueue {
  async claim(memberId, token) {
    const claim = await super.claim(memberId, token);
    ordersInFlight++;
    binMaxOrdersInFlight = Math.max(binMaxOrdersInFlight, ordersInFlight);
    maxOrdersInFlight = Math.max(maxOrdersInFlight, ordersInFlight);
    return claim;
  }
  async consume(claim) {
    try {
      const ok = await super.consume(claim);
      if (ok) orders++;
      return ok;
    } finally {
      ordersInFlight--;
    }
  }
  async release(claim) {
    try {
      return await super.release(claim);
    } finally {
      ordersInFlight--;
    }
  }
}

const queue = new InstrumentedQueue({
  store,
  name: 'sneaker-drop',
  admitRatePerSecond: config.admitRatePerSecond,
  maxActive: config.maxActive,
  entryTokenTtlSeconds: config.entryTokenTtlSeconds,
  claimTtlSeconds: config.claimTtlSeconds,
  positionCache: config.positionCache,
  // Abandonment (issue #11): undefined keeps the queue's defaults (300 s; no pick-up timeout).
  ...(config.abandonAfterSeconds !== undefined ? { abandonAfterSeconds: config.abandonAfterSeconds } : {}),
  ...(config.pickupTimeoutSeconds !== undefined ? { pickupTimeoutSeconds: config.pickupTimeoutSeconds } : {}),
  ...(config.holdSilentAfterSeconds !== undefined ? { holdSilentAfterSeconds: config.holdSilentAfterSeconds } : {}),
  ...(config.pollingIntervals ? { pollingIntervals: config.pollingIntervals } : {}),
});
let queueErrors = 0;
queue.on('error', () => queueErrors++);
queue.on('warning', (w) => console.error('[shop] warning:', w.message));
let admissions = 0;
queue.on('admitted', (list) => (admissions += list.length));
let abandonedEvents = 0;
queue.on('abandoned', (list) => (abandonedEvents += list.length));

// ---- the order database: plenty of stock, transactions counted
const db = openDatabase(':memory:');
db.prepare('UPDATE products SET stock = ?').run(config.stock);
let dbInFlight = 0;
let maxDbInFlight = 0;
let dbTransactions = 0;
const countedDb = new Proxy(db, {
  get(target, prop) {
    if (prop === 'transaction') {
      return (fn) => {
        const tx = target.transaction(fn);
        return (...args) => {
          dbInFlight++;
          dbTransactions++;
          maxDbInFlight = Math.max(maxDbInFlight, dbInFlight);
          try {
            return tx(...args);
          } finally {
            dbInFlight--;
          }
        };
      };
    }
    const value = Reflect.get(target, prop, target);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

// ---- the shop itself, plus per-second sampling
const gate = config.gate ? powGate({ hmacKey: config.gate.hmacKey, difficulty: config.gate.difficulty }) : undefined;
const identity = config.identityHeader ? (req) => req.get(config.identityHeader) : undefined;
/** The shop with the identity option if this build of waitgate accepts it (feature-detected: the routes refuse an unknown option). */
function shopWithIdentity() {
  if (!identity) return { app: createShop({ queue, db: countedDb, gate }), identity: 'off' };
  try {
    return { app: createShop({ queue, db: countedDb, gate, identity }), identity: 'on' };
  } catch (error) {
    if (error?.code !== 'CONFIG_INVALID' || !/identity/.test(`${error.option} ${error.message}`)) throw error;
    return { app: createShop({ queue, db: countedDb, gate }), identity: 'unsupported' };
  }
}
const { app, identity: identityMode } = shopWithIdentity();
const server = app.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port, identity: identityMode }));
server.keepAliveTimeout = 60_000;

let admitter = null;
const controlChanges = [];
let sampler = null;
const series = [];
let t0 = 0;
let last = { admissions: 0, orders: 0, calls: {}, dropped: 0 };
let lastCpu = process.cpuUsage();
let lastAt = performance.now();
let eventLoopLagMax = 0;
let lagTimer = null;

async function sample() {
  const at = Date.now();
  let stats = null;
  try {
    stats = await queue.stats();
  } catch {
    stats = null;
  }
  const cpu = process.cpuUsage(lastCpu);
  const now = performance.now();
  series.push({
    t: (at - t0) / 1000,
    waiting: stats?.waiting ?? null,
    ready: stats ? stats.active - stats.claimed : null,
    claimed: stats?.claimed ?? null,
    active: stats?.active ?? null,
    admissionsPerSecond: admissions - last.admissions,
    droppedPerSecond: dropped.length - last.dropped,
    abandonedTotal: stats?.abandoned ?? null,
    ordersPerSecond: orders - last.orders,
    maxOrdersInFlight: binMaxOrdersInFlight,
    shopCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / (now - lastAt)) * 100),
    eventLoopLagMaxMs: Math.round(eventLoopLagMax),
    storeCalls: Object.fromEntries(Object.entries(storeCalls).map(([m, n]) => [m, n - (last.calls[m] ?? 0)])),
  });
  last = { admissions, orders, calls: { ...storeCalls }, dropped: dropped.length };
  lastCpu = process.cpuUsage();
  lastAt = now;
  binMaxOrdersInFlight = ordersInFlight;
  eventLoopLagMax = 0;
}

process.on('message', async (message) => {
  if (message.type === 'start') {
    t0 = message.t0;
    admitter = queue.startAdmitter({ intervalMs: config.admitIntervalMs });
    sampler = setInterval(() => void sample(), 1000);
    let expected = performance.now() + 100;
    lagTimer = setInterval(() => {
      const now = performance.now();
      eventLoopLagMax = Math.max(eventLoopLagMax, now - expected);
      expected = now + 100;
    }, 100);
  }
  if (message.type === 'controls') {
    // A rate change mid-sale (setControls, as an operator would): its moment and the controls in force after.
    const at = Date.now();
    try {
      const controls = await queue.setControls(message.patch);
      controlChanges.push({ at, patch: message.patch, admitRatePerSecond: controls.admitRatePerSecond });
    } catch (error) {
      controlChanges.push({ at, patch: message.patch, error: error.message });
    }
  }
  if (message.type === 'stop') {
    clearInterval(sampler);
    clearInterval(lagTimer);
    await admitter?.stop();
    await sample();
    // FIFO, part 2: nobody still waiting may have entered before a member that was admitted.
    const waitingKey = '{waitgate:sneaker-drop}:waiting';
    const skipped = Number.isFinite(lastAdmittedSeq) ? await redis.zcount(waitingKey, '-inf', `(${lastAdmittedSeq}`) : 0;
    const stillWaiting = await redis.zrange(waitingKey, 0, -1);
    const final = await queue.stats();
    const result = {
      type: 'result',
      series,
      admittedOrder,
      admittedAt,
      dropped,
      abandonedEvents,
      stillWaiting,
      final,
      fifo: {
        outOfOrderAdmissions: fifoViolations,
        skippedStillWaiting: skipped,
        admittedWithKnownSeq: admittedOrder.filter((m) => seqOf.has(m)).length,
        overtaken,
      },
      held: { steps: heldSteps, max: heldMax },
      controlChanges,
      maxOrdersInFlight,
      storeCalls,
      storeCallsByClass,
      maxDbTransactionsInFlight: maxDbInFlight,
      dbTransactions,
      orders,
      admissions,
      queueErrors,
      ordersInDb: db.prepare('SELECT COUNT(*) AS n FROM orders').get().n,
      duplicateTokenOrders: db.prepare('SELECT COUNT(*) AS n FROM (SELECT token_id FROM orders GROUP BY token_id HAVING COUNT(*) > 1)').get().n,
      shopCpuSeconds: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    };
    server.closeAllConnections?.();
    server.close();
    await redis.quit();
    db.close();
    await sendAndExit(result);
  }
});
process.on('disconnect', () => process.exit(1));
