// One app instance of bench/crowd-million.mjs, in its own Node process: a WaitingQueue
// with positionCache on a RedisStore (group commit as the build's default), its share of
// the crowd (members m<i> with i % processes === index), driven by the coordinator over
// IPC. No HTTP: the simulated pollers call queue.position(member) directly.
//
//   coordinator -> { type: 'enter', concurrency }       enters this instance's members
//               -> { type: 'poll', seconds, admit }     polls at the hinted intervals (+-20%)
//               -> { type: 'sample', uniform, head }     reported rank vs ZRANK for some members
//               -> { type: 'stop' }
//   instance    -> 'ready', 'entered', 'tick' (every second while polling), 'sampled', 'polled'

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { countingStore, diffCounts } from '../lib/counting-store.mjs';
import { Latencies, round } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const send = (message) => process.send(message);

const config = JSON.parse(process.env.CROWD_INSTANCE);
const { index, processes, members: N, url, name, queueOptions, admitIntervalMs, jitter, subscribe } = config;
const M = Math.floor(N / processes) + (index < N % processes ? 1 : 0); // this instance's members
// Built once: the same strings are the keys of positionCache's map (no copy per poll).
const memberIds = Array.from({ length: M }, (_, j) => `m${j * processes + index}`);
const idOf = (j) => memberIds[j];

const client = new Redis(url, { maxRetriesPerRequest: 1 });
const control = new Redis(url, { maxRetriesPerRequest: 1 });
// The pushes of admission steps (RedisStore subscriber), unless the run turns them off.
const subscriber = subscribe ? client.duplicate() : null;
const store = countingStore(new RedisStore({ client, ...(subscriber ? { subscriber } : {}) }));
// touch calls carry member ids: count them too (signs of life recorded, abandonment on).
let touchedIds = 0;
const touch = store.touch;
if (touch) {
  store.touch = (queue, request) => {
    touchedIds += request.seen.length + request.pickedUp.length;
    return touch(queue, request);
  };
}
const queue = new WaitingQueue({ store, name, ...queueOptions });
const queueErrors = [];
queue.on('error', (error) => {
  if (queueErrors.length < 5) queueErrors.push(String(error?.message ?? error));
});
const waitingKey = `{waitgate:${name}}:waiting`;

const WAITING = 0;
const READY = 1;
const state = new Uint8Array(M);
const interval = new Uint8Array(M); // seconds, from the last answer
const lastRank = new Int32Array(M).fill(-1);

/** Memory after a full GC (what the instance holds: mostly positionCache's entries), and the peak RSS so far. */
function memory() {
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { rssMB: round(m.rss / 2 ** 20, 1), heapUsedMB: round(m.heapUsed / 2 ** 20, 1), maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1) };
}

async function enterAll(concurrency) {
  const latencies = new Latencies();
  let next = 0;
  let errors = 0;
  let lastError = null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < M) {
      const j = next++;
      for (let attempt = 0; ; attempt++) {
        const t = performance.now();
        try {
          const p = await queue.enter(idOf(j));
          latencies.push(performance.now() - t);
          interval[j] = p.pollingIntervalSeconds;
          lastRank[j] = p.rank ?? -1;
          break;
        } catch (error) {
          // enter is idempotent: a timed-out or failed call is sent again.
          errors++;
          lastError = String(error?.message ?? error);
          if (attempt >= 5) throw error;
          await sleep(50);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, M) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const lat = latencies.summary();
  return {
    members: M,
    seconds: round(seconds, 2),
    entriesPerSecond: round(M / seconds, 0),
    latencyMs: { p50: round(lat.p50, 2), p99: round(lat.p99, 2), max: round(lat.max, 1) },
    errors,
    lastError,
    nodeCpuShare: round((cpu.user + cpu.system) / 1000 / (seconds * 1000), 3),
    storeCalls: store.snapshotCounts(),
    memory: memory(),
  };
}

// ---------- polling: a timing wheel of 10 ms slots; each member polls at its hinted interval +-jitter.
const SLOT_MS = 10;
const POLLS_PER_TURN = 2000;
const WHEEL = 1024; // 10.24 s: longer than the slowest interval (5 s) + 20%
const wheel = Array.from({ length: WHEEL }, () => []);
let wheelSlot = 0; // the next absolute slot to run
let polling = false;
const tickCounters = () => ({ polls: 0, ready: 0, errors: 0, maxLagMs: 0, lagSumMs: 0 });
let tick = tickCounters();
let total = { polls: 0, ready: 0, errors: 0, lastError: null, lateOver1s: 0 };

function schedule(j, atMs) {
  const slot = Math.max(wheelSlot, Math.floor(atMs / SLOT_MS));
  wheel[slot % WHEEL].push(j, slot); // member, absolute slot (a slot can hold entries one turn of the wheel ahead)
}

// The loop's clock, read once per turn: answers from positionCache arrive in the same turn.
let clock = performance.now();

function onAnswer(j, p) {
  if (p.status === 'READY' || p.status === 'NOT_ENTERED') {
    state[j] = READY;
    tick.ready++;
    total.ready++;
    return;
  }
  lastRank[j] = p.rank;
  interval[j] = p.pollingIntervalSeconds;
  if (polling) schedule(j, clock + p.pollingIntervalSeconds * 1000 * (1 - jitter + 2 * jitter * Math.random()));
}

function onError(error) {
  tick.errors++;
  total.errors++;
  total.lastError = String(error?.message ?? error);
}

function poll(j, lag) {
  tick.polls++;
  total.polls++;
  if (lag > tick.maxLagMs) tick.maxLagMs = lag;
  tick.lagSumMs += lag;
  if (lag > 1000) total.lateOver1s++;
  queue.position(memberIds[j]).then(
    (p) => onAnswer(j, p),
    (error) => {
      onError(error);
      if (polling) schedule(j, clock + 1000);
    },
  );
}

async function pollFor(seconds, admit) {
  polling = true;
  tick = tickCounters();
  total = { polls: 0, ready: 0, errors: 0, lastError: null, lateOver1s: 0 };
  const start = performance.now();
  wheelSlot = Math.floor(start / SLOT_MS);
  // First polls spread over each member's interval (the crowd is already polling).
  for (let j = 0; j < M; j++) if (state[j] === WAITING) schedule(j, start + Math.random() * interval[j] * 1000);
  const countsBefore = store.snapshotCounts();
  const touchedBefore = touchedIds;
  const cpu0 = process.cpuUsage();
  let cpuTick = process.cpuUsage();
  let countsTick = countsBefore;
  let lastTickAt = start;
  const admitter = admit ? queue.startAdmitter({ intervalMs: admitIntervalMs }) : null;
  const end = start + seconds * 1000;
  // Due polls leave the wheel for a FIFO, run at most POLLS_PER_TURN per turn of the event
  // loop: the instance answers its Redis replies (exact look-ups, snapshots, admits) between
  // chunks even when it cannot keep up, and then polls run late (reported), never in a burst.
  let due = [];
  let dueHead = 0;
  while (performance.now() < end) {
    const now = performance.now();
    clock = now;
    const nowSlot = Math.floor(now / SLOT_MS);
    for (; wheelSlot <= nowSlot; wheelSlot++) {
      const at = wheelSlot % WHEEL;
      const list = wheel[at];
      if (list.length === 0) continue;
      wheel[at] = [];
      for (let k = 0; k < list.length; k += 2) {
        if (list[k + 1] > wheelSlot)
          wheel[at].push(list[k], list[k + 1]); // a later turn of the wheel
        else due.push(list[k], list[k + 1]);
      }
    }
    for (let budget = POLLS_PER_TURN; budget > 0 && dueHead < due.length; budget--) {
      const j = due[dueHead];
      const slot = due[dueHead + 1];
      dueHead += 2;
      if (state[j] === WAITING) poll(j, now - slot * SLOT_MS);
    }
    if (now - lastTickAt >= 1000) {
      const counts = store.snapshotCounts();
      const cpu = process.cpuUsage(cpuTick);
      send({
        type: 'tick',
        at: now,
        seconds: (now - lastTickAt) / 1000,
        ...tick,
        backlog: (due.length - dueHead) / 2,
        calls: diffCounts(countsTick, counts),
        nodeCpuShare: (cpu.user + cpu.system) / 1000 / (now - lastTickAt),
      });
      tick = tickCounters();
      countsTick = counts;
      cpuTick = process.cpuUsage();
      lastTickAt = now;
    }
    if (dueHead >= due.length) {
      due = [];
      dueHead = 0;
      await sleep(SLOT_MS / 2);
    } else {
      if (dueHead > 1 << 20) {
        due = due.slice(dueHead);
        dueHead = 0;
      }
      await new Promise((r) => setImmediate(r)); // I/O first, then the next chunk
    }
  }
  total.backlogAtEnd = (due.length - dueHead) / 2;
  polling = false;
  if (admitter) await admitter.stop();
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const list of wheel) list.length = 0;
  await sleep(200); // the last answers
  return {
    seconds: round(elapsed, 1),
    ...total,
    pollsPerSecond: round(total.polls / elapsed, 0),
    dueMembers: Array.from(state).filter((s) => s === WAITING).length,
    storeCalls: diffCounts(countsBefore, store.snapshotCounts()),
    touchedIds: touchedIds - touchedBefore,
    nodeCpuShare: round((cpu.user + cpu.system) / 1000 / (elapsed * 1000), 3),
    memory: memory(),
    queueErrors,
  };
}

/** Members sampled at a time (see sample()). */
const SAMPLE_CONCURRENCY = 16;

/** Reported rank (queue.position) vs ZRANK read right before and right after, for `uniform` random waiting members and `head` members last told a rank in [headFrom, headTo). */
async function sample({ uniform, head, headFrom, headTo }) {
  const picked = new Map(); // member -> drawn near the head
  for (let tries = 0; picked.size < uniform && tries < uniform * 20; tries++) {
    const j = (Math.random() * M) | 0;
    if (state[j] === WAITING) picked.set(j, false);
  }
  const near = [];
  for (let j = 0; j < M; j++) if (state[j] === WAITING && lastRank[j] >= headFrom && lastRank[j] < headTo && !picked.has(j)) near.push(j);
  for (let k = 0; k < head && near.length > 0; k++) {
    const at = (Math.random() * near.length) | 0;
    picked.set(near[at], true);
    near[at] = near[near.length - 1];
    near.pop();
  }
  // Each member: ZRANK, then its position (answered from the cache, or one exact look-up),
  // then ZRANK again right after the answer. The rank when it answered lies between the two.
  // SAMPLE_CONCURRENCY members at a time: with all of them at once, the second ZRANK of
  // each came tens of ms after its answer (the bracket was wide, the error against the
  // ZRANK after counted the admissions of those ms).
  const rows = [];
  const members = [...picked];
  for (let at = 0; at < members.length; at += SAMPLE_CONCURRENCY) {
    rows.push(
      ...(await Promise.all(
        members.slice(at, at + SAMPLE_CONCURRENCY).map(async ([j, nearHead]) => {
          const id = idOf(j);
          const before = await control.zrank(waitingKey, id);
          // The poll in a turn of the event loop of its own, as an HTTP request comes, not inside
          // the callback of the ZRANK reply: what Redis sent before that reply on the instance's
          // other connections (the pushes of admission steps) has then been read, as it would be
          // by any request arriving after it. The bracket stays valid: the rank at the answer
          // still lies between the two ZRANKs.
          await new Promise((r) => setImmediate(r));
          const p = await queue.position(id);
          const exact = await control.zrank(waitingKey, id);
          return { head: nearHead, status: p.status, reported: p.rank, exact, before };
        }),
      )),
    );
  }
  return rows;
}

for (const event of ['unhandledRejection', 'uncaughtException']) {
  process.on(event, (error) => {
    send({ type: 'failed', error: `${event}: ${String(error?.stack ?? error)}` });
    setTimeout(() => process.exit(1), 100);
  });
}

process.on('message', async (message) => {
  try {
    if (message.type === 'enter') send({ type: 'entered', ...(await enterAll(message.concurrency)) });
    else if (message.type === 'poll') send({ type: 'polled', ...(await pollFor(message.seconds, message.admit)) });
    else if (message.type === 'sample') send({ type: 'sampled', rows: await sample(message) });
    else if (message.type === 'stop') {
      await Promise.all([client, control, ...(subscriber ? [subscriber] : [])].map((c) => c.quit().catch(() => c.disconnect())));
      process.exit(0);
    }
  } catch (error) {
    send({ type: 'failed', error: String(error?.stack ?? error) });
  }
});
send({ type: 'ready', members: M, positionCache: queue.config.positionCache, memory: memory() });
