// Runs inside a fresh network namespace (`unshare -n node test/support/fault-netns.mjs`),
// for test/faults/network-faults.test.ts (F5, network blackhole). It brings up the
// namespace's own loopback, starts a redis-server there, drives waitgate (the built
// package) against it, blackholes the server's port with iptables DROP for a while,
// removes the rule, and prints one JSON line with what it saw. Nothing outside the
// namespace is touched: its 127.0.0.1 is not the host's.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const { RedisStore, WaitingQueue } = await import('waitgate');

const PORT = 16390;
const BLACKHOLE_MS = Number(process.env.BLACKHOLE_MS ?? 2000);
const TIMEOUT_MS = 400;
const LEASE_SECONDS = 1;
const RULE = ['INPUT', '-p', 'tcp', '--dport', String(PORT), '-j', 'DROP'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sh(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.error?.message}): ${r.stderr}`);
  return r.stdout;
}

function ping() {
  return new Promise((resolve) => {
    const socket = connect(PORT, '127.0.0.1');
    const done = (ok) => (socket.destroy(), resolve(ok));
    socket.setTimeout(300, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

function kind(error) {
  return error?.code === 'STORE_UNAVAILABLE'
    ? 'StoreUnavailableError'
    : error?.code
      ? `${error.constructor.name}:${error.code}`
      : String(error?.constructor?.name ?? error);
}

const result = {};
const dir = mkdtempSync(join(tmpdir(), 'waitgate-netns-'));
let redis;
let client;
try {
  // The namespace starts with its loopback down and no rules.
  sh('ip', ['link', 'set', 'lo', 'up']);
  result.netns = sh('readlink', ['/proc/self/ns/net']).trim();
  result.rulesBefore = sh('iptables', ['-S', 'INPUT']).trim();

  redis = spawn('redis-server', ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; !(await ping()); i++) {
    if (i > 200) throw new Error('redis-server did not start in the namespace');
    await sleep(25);
  }

  client = new Redis(PORT, '127.0.0.1', { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const queue = new WaitingQueue({
    store: new RedisStore({ client }),
    name: 'f5',
    admitBurst: 20,
    entryTokenTtlSeconds: 120,
    claimTtlSeconds: LEASE_SECONDS,
    operationTimeoutMs: TIMEOUT_MS,
  });
  const before = Array.from({ length: 30 }, (_, i) => `before-${i}`);
  for (const m of before) await queue.enter(m);
  const tokens = new Map((await queue.admit()).map((a) => [a.memberId, a.entryToken])); // before-0..19 READY
  const waitingBefore = before.slice(20);

  // Blackhole: every packet to the server's port is dropped, the connection stays "up".
  const calls = [];
  const timed = async (op, call) => {
    const startedAt = performance.now();
    try {
      const value = await call();
      calls.push({ op, ms: performance.now() - startedAt, ok: true });
      return { ok: true, value };
    } catch (error) {
      calls.push({ op, ms: performance.now() - startedAt, ok: false, error: kind(error) });
      return { ok: false, error };
    }
  };
  sh('iptables', ['-A', ...RULE]);
  const droppedAt = performance.now();
  const during = { entered: [], claimedMembers: [] };
  const claimable = [...tokens.keys()];
  let n = 0;
  const worker = async () => {
    while (performance.now() - droppedAt < BLACKHOLE_MS - TIMEOUT_MS) {
      const i = n++;
      const op = i % 4;
      if (op === 0) {
        const m = `during-${i}`;
        during.entered.push(m);
        await timed('enter', () => queue.enter(m));
      } else if (op === 1 && claimable.length > 0) {
        const m = claimable.shift();
        during.claimedMembers.push(m);
        await timed('claim', () => queue.claim(m, tokens.get(m)));
      } else if (op === 2) {
        await timed('position', () => queue.position(waitingBefore[0]));
      } else {
        await timed('admit', () => queue.admit());
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  while (performance.now() - droppedAt < BLACKHOLE_MS) await sleep(10);
  const counters = sh('iptables', ['-L', 'INPUT', '-v', '-n', '-x']);
  result.droppedPackets = Number(/^\s*(\d+)\s+\d+\s+DROP/m.exec(counters)?.[1] ?? -1);
  sh('iptables', ['-D', ...RULE]);
  const removedAt = performance.now();
  result.rulesAfter = sh('iptables', ['-S', 'INPUT']).trim();
  result.blackholeMs = Math.round(removedAt - droppedAt);
  result.duringCalls = calls.length;
  result.duringErrors = {};
  for (const c of calls) {
    const k = c.ok ? 'ok' : c.error;
    result.duringErrors[k] = (result.duringErrors[k] ?? 0) + 1;
  }
  result.duringMaxMs = Math.round(Math.max(...calls.map((c) => c.ms)));
  result.duringMinMs = Math.round(Math.min(...calls.map((c) => c.ms)));

  // Recovery: no manual step, the same client.
  let recovered = false;
  while (!recovered && performance.now() - removedAt < 15_000) {
    recovered = await queue.stats().then(
      () => true,
      () => false,
    );
    if (!recovered) await sleep(50);
  }
  result.recovered = recovered;
  result.recoveryMs = Math.round(performance.now() - removedAt);

  // Nothing acknowledged before the blackhole was lost.
  const stateOf = (m) => queue.state(m);
  // (Admits that timed out may have run late and admitted the ones that were waiting.)
  const tally = async (members) => {
    const counts = {};
    for (const m of members) {
      const s = await stateOf(m);
      counts[s] = (counts[s] ?? 0) + 1;
    }
    return counts;
  };
  result.admittedBeforeStates = await tally([...tokens.keys()]);
  result.waitingBeforeStates = await tally(waitingBefore);
  // Calls that timed out may have run once the packets flowed again (their outcome was unknown).
  result.duringEnteredStates = await tally(during.entered);
  // Retrying is safe: a repeated enter keeps the rank, a late claim holds the token only for its lease.
  const ranks = await Promise.all(during.entered.map((m) => queue.position(m).then((p) => p.rank)));
  const reentered = await Promise.all(during.entered.map((m) => queue.enter(m).then((p) => p.rank)));
  result.reenterKeptRank = ranks.every((r, i) => r === null || r === reentered[i]);
  result.inUseAfterRecovery = 0;
  for (const m of during.claimedMembers) {
    await queue.claim(m, tokens.get(m)).then(
      (c) => queue.release(c),
      (e) => {
        if (e.code !== 'IN_USE') throw e;
        result.inUseAfterRecovery++;
      },
    );
  }
  await sleep(LEASE_SECONDS * 1000 + 300);
  result.claimedAfterLease = (await queue.stats()).claimed;
  // Every token admitted before the blackhole can now be used exactly once.
  let consumed = 0;
  for (const [m, token] of tokens) {
    const claim = await queue.claim(m, token);
    if (await queue.consume(claim)) consumed++;
    if (
      await queue.claim(m, token).then(
        () => true,
        () => false,
      )
    )
      throw new Error(`token of ${m} usable twice`);
  }
  result.consumedAfterRecovery = consumed;
  result.tokens = tokens.size;
  // A member admitted by an admit whose reply was lost is READY and finds its token by polling.
  const lateAdmitted = [];
  for (const m of [...waitingBefore, ...during.entered]) if ((await stateOf(m)) === 'READY') lateAdmitted.push(m);
  result.lateAdmitted = lateAdmitted.length;
  result.lateAdmittedWithToken = (await Promise.all(lateAdmitted.map((m) => queue.token(m)))).filter((t) => t !== null && t.entryToken.length === 43).length;
  result.stats = await queue.stats();
  await queue.enter('after');
  result.admittedAfter = (await queue.admit()).map((a) => a.memberId);
} catch (error) {
  result.failure = String(error?.stack ?? error);
} finally {
  client?.disconnect();
  redis?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
