// Turns bench results into the printed report and the target checks.

const fmt = (v, digits = 0) => (v === null || v === undefined || Number.isNaN(v) ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

/** The issue's targets, each { target, value, met }. Missing sections are left out. */
export function checkTargets(r) {
  const t = {};
  const ratio = (op, c, key) => r.micro?.results?.[op]?.[c]?.ratios?.[key];
  if (r.micro) {
    t['enter >= 1.5x naive at c64'] = { value: ratio('enter', 64, 'waitgate/naive'), need: 1.5 };
    t['enter >= 0.85x floor at c64'] = { value: ratio('enter', 64, 'waitgate/floor'), need: 0.85 };
    t['position >= 2x naive at c64'] = { value: ratio('position', 64, 'waitgate/naive'), need: 2 };
    t['position >= 2x naive at c1'] = { value: ratio('position', 1, 'waitgate/naive'), need: 2 };
    t['position (positionCache) >= 2x naive at c64'] = { value: ratio('position', 64, 'waitgate positionCache/naive'), need: 2 };
  }
  if (r.memory?.memory) {
    for (const [n, m] of Object.entries(r.memory.memory)) t[`memory per member <= 1.15x bare zset at ${Number(n).toLocaleString('en-US')}`] = { value: m.ratio, max: 1.15 };
  }
  if (r.memory?.admitRatio !== undefined) t['admit(50) at 1M <= 2x at 10k'] = { value: r.memory.admitRatio, max: 2 };
  if (r.polling) {
    const p = r.polling;
    t['<= 0.05 Redis calls per poll (sticky routing)'] = { value: p.sticky.redisScriptCallsPerPoll, max: 0.05 };
    t['rank exact when nobody left (max abs error)'] = { value: p.accuracyBeforeLeaves.maxAbsError, max: 0 };
    t['rank within 1% (mean rel. error, after leaves)'] = { value: p.accuracyAfterLeaves.meanRelError, max: 0.01 };
    t['rank within 1% (max rel. error, every member)'] = { value: p.accuracyAfterLeaves.maxRelError, max: 0.01 };
    t['READY within one polling interval (members later)'] = { value: p.ready.slowerThanOneInterval, max: 0 };
    t['READY on the first poll after admission (members not)'] = { value: p.ready.admitted - p.ready.firstPollAfterAdmissionWasReady, max: 0 };
  }
  if (r.opening) {
    const o = r.opening;
    t['opening: no waitgate script call > 50 ms (ms, whole run)'] = { value: o.longestScriptCall?.ms, max: 50 };
    t['opening: first admit() 1M / 10k, Redis time (about the same)'] = { value: o.firstAdmitRatio.redis, max: 1.25 };
    t['opening: first admit() 1M / 10k, wall time (about the same)'] = { value: o.firstAdmitRatio.wall, max: 1.25 };
    t['opening: admitted order = drawOrder (mismatches)'] = { value: o.drawOrder.mismatches, max: 0 };
  }
  if (r.pollingShuffle) {
    const p = r.pollingShuffle;
    t['drawn pre-queue: rank within 1% after the opening (max rel., caches from enters)'] = { value: p.accuracyBeforeLeaves.maxRelError, max: 0.01 };
    if (p.accuracyFreshCaches) t['drawn pre-queue: rank within 1% after the opening (max rel., fresh caches)'] = { value: p.accuracyFreshCaches.maxRelError, max: 0.01 };
    t[`drawn pre-queue: rank within 1% after leaves (max rel., ${p.preQueue?.pollThrough === 'enter' ? 'caches from enters' : 'fresh caches'})`] = { value: p.accuracyAfterLeaves.maxRelError, max: 0.01 };
    t['drawn pre-queue: <= 0.05 Redis calls per poll (sticky routing)'] = { value: p.sticky.redisScriptCallsPerPoll, max: 0.05 };
  }
  if (r.groupCommit) {
    const g = (op, c) => r.groupCommit.results?.[op]?.[c]?.ratios ?? {};
    t['group commit: enter >= 2.0x floor at c256'] = { value: g('enter', 256)['waitgate/floor'], need: 2 };
    t['group commit: enter >= 1.3x floor at c64'] = { value: g('enter', 64)['waitgate/floor'], need: 1.3 };
    t['group commit: enter c1 p50 <= 1.1x group commit off'] = { value: g('enter', 1)['p50 waitgate/waitgate gc off'], max: 1.1 };
    t['group commit: position (exact) >= 2.0x floor at c256'] = { value: g('position', 256)['waitgate/floor'], need: 2 };
  }
  for (const v of Object.values(t)) v.met = v.value !== null && v.value !== undefined && (v.need !== undefined ? v.value >= v.need : v.value <= v.max);
  return t;
}

export function printReport(r, log) {
  if (r.micro) {
    log(`\nPer operation (median ops/s of ${r.micro.settings.rounds} rounds x ${r.micro.settings.roundMs} ms; p50/p99 ms over all rounds; ratios = medians of per-round ratios)`);
    log(`${pad('operation', 15)}${lpad('c', 4)}  ${pad('variant', 24)}${lpad('ops/s', 10)}${lpad('p50 ms', 9)}${lpad('p99 ms', 9)}${lpad('cmds/op', 9)}${lpad('Redis us/op', 13)}  errors`);
    for (const [op, byC] of Object.entries(r.micro.results)) {
      for (const [c, cell] of Object.entries(byC)) {
        for (const [name, v] of Object.entries(cell.variants)) {
          log(`${pad(op, 15)}${lpad(c, 4)}  ${pad(name, 24)}${lpad(fmt(v.opsPerSec), 10)}${lpad(fmt(v.p50Ms, 3), 9)}${lpad(fmt(v.p99Ms, 3), 9)}${lpad(fmt(v.redisCommandsPerOp, 2), 9)}${lpad(fmt(v.redisUsecPerOp, 1), 13)}  ${v.errors}`);
        }
        log(`${pad('', 19)}  ratios: ${Object.entries(cell.ratios).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}`);
      }
    }
  }
  if (r.memory) {
    log('\nRedis memory per waiting member (INFO used_memory delta)');
    for (const [n, m] of Object.entries(r.memory.memory)) {
      log(`  ${lpad(Number(n).toLocaleString('en-US'), 9)} members: waitgate ${fmt(m.waitgateBytesPerMember, 1)} B, bare zset ${fmt(m.bareZsetBytesPerMember, 1)} B, ratio ${fmt(m.ratio, 3)}  [${m.waitgateLoad}]`);
    }
    if (r.memory.bulkCheck) log(`  bulk path check at 100,000: ${fmt(r.memory.bulkCheck.bulkBytesPerMember, 1)} B/member vs ${fmt(r.memory.bulkCheck.apiBytesPerMember, 1)} through the API; ranks continue: ${r.memory.bulkCheck.ok}`);
    log('admit() of 50, Redis time (SLOWLOG)');
    for (const [n, a] of Object.entries(r.memory.admit)) log(`  ${lpad(Number(n).toLocaleString('en-US'), 9)} waiting: median ${fmt(a.medianUs)} us (min ${fmt(a.minUs)}, max ${fmt(a.maxUs)}, ${a.calls} calls of ${a.admittedPerCall})`);
    const sizes = Object.keys(r.memory.admit).map((n) => Number(n).toLocaleString('en-US'));
    log(`  ratio ${sizes[sizes.length - 1]} / ${sizes[0]}: ${fmt(r.memory.admitRatio, 2)}`);
  }
  if (r.polling) {
    const p = r.polling;
    log(`\nPolling at scale: ${p.settings.members.toLocaleString('en-US')} waiting, ${p.settings.instances} instances, positionCache (refresh ${p.settings.refreshMs} ms), ${p.settings.admitRatePerSecond} admitted/s, ${p.settings.leaveFraction * 100}% leave`);
    log(`  sticky routing: ${fmt(p.sticky.polls)} polls in ${p.sticky.seconds} s; store calls per poll ${fmt(p.sticky.pollStoreCallsPerPoll, 4)} (${p.sticky.storeCalls.position} position + ${p.sticky.storeCalls.queueSnapshot} snapshots); Redis script calls per poll ${fmt(p.sticky.redisScriptCallsPerPoll, 4)}; all Redis commands (incl. inside scripts, admits, leaves) per poll ${fmt(p.sticky.redisAllCommandsPerPoll, 4)}`);
    if (p.randomRouting) log(`  random routing, first ${p.randomRouting.seconds} s: ${fmt(p.randomRouting.pollStoreCallsPerPoll, 4)} store calls per poll (cold caches)`);
    const a = p.accuracyBeforeLeaves;
    const b = p.accuracyAfterLeaves;
    log(`  ranks, nobody left: ${a.compared} compared, max abs error ${a.maxAbsError}`);
    log(`  ranks, ${b.left} left: mean rel. error ${fmt(b.meanRelError * 100, 3)}%, p99 ${fmt(b.p99RelError * 100, 2)}%, max ${fmt(b.maxRelError * 100, 2)}% (exact ${b.maxRelErrorAt?.exact}, reported ${b.maxRelErrorAt?.reported}); within 1%: ${fmt(b.within1Percent * 100, 2)}% of members; max abs error ${b.maxAbsError}`);
    for (const [band, v] of Object.entries(b.byExactRank)) log(`    exact rank ${pad(band, 10)} ${lpad(v.members, 6)} members: mean ${fmt(v.mean * 100, 3)}%, max ${fmt(v.max * 100, 2)}%`);
    log(`  READY: ${p.ready.admitted} admitted, ${p.ready.firstPollAfterAdmissionWasReady} READY on the first poll after admission, ${p.ready.slowerThanOneInterval} later than one interval (+20% jitter); admission->READY p50 ${p.ready.latencyMs.p50} ms, p99 ${p.ready.latencyMs.p99} ms, max ${p.ready.latencyMs.max} ms`);
  }
  if (r.opening) {
    const o = r.opening;
    const sizes = o.settings.sizes.map((n) => Number(n));
    const [small, big] = [Math.min(...sizes), Math.max(...sizes)];
    log(`\nScheduled shuffled opening: ${big.toLocaleString('en-US')} vs ${small.toLocaleString('en-US')} pre-queued, ${o.settings.rounds} interleaved rounds, admitBurst ${o.settings.admitBurst}, rate ${o.settings.admitRatePerSecond}/s`);
    log(`${pad('pre-queued', 12)}${lpad('first admit() wall ms', 24)}${lpad('Redis us (SLOWLOG)', 20)}${lpad('Redis CPU us', 14)}${lpad('admitted', 10)}${lpad('calls', 7)}`);
    for (const n of [big, small]) {
      const f = o.firstAdmit[n];
      log(`${pad(n.toLocaleString('en-US'), 12)}${lpad(fmt(f.wallMsMedian, 2), 24)}${lpad(fmt(f.redisUsMedian), 20)}${lpad(fmt(f.redisCpuUsMedian), 14)}${lpad(f.admitted, 10)}${lpad(f.scriptCalls, 7)}`);
    }
    log(`  ratio ${big.toLocaleString('en-US')} / ${small.toLocaleString('en-US')} (median of per-round ratios): wall ${fmt(o.firstAdmitRatio.wall, 2)}, Redis time ${fmt(o.firstAdmitRatio.redis, 2)}, Redis CPU ${fmt(o.firstAdmitRatio.redisCpu, 2)}`);
    const l = o.longestScriptCall;
    if (l) log(`  longest waitgate script call: ${l.script} ${fmt(l.ms, 2)} ms (${l.phase}; its ${l.innerCommands} commands took ${l.innerUs} us; Redis waited ${l.phaseRedisRunQueueWaitUs === null ? '?' : fmt(l.phaseRedisRunQueueWaitUs / 1000, 0)} ms for a CPU in that phase)`);
    log(`  ${pad('script', 16)}${lpad('calls', 8)}${lpad('median us', 11)}${lpad('p99 us', 9)}${lpad('max us', 9)}  phase of the max`);
    for (const [name, v] of Object.entries(o.scripts)) log(`  ${pad(name, 16)}${lpad(v.calls, 8)}${lpad(fmt(v.medianUs), 11)}${lpad(fmt(v.p99Us), 9)}${lpad(fmt(v.maxUs), 9)}  ${v.maxPhase}`);
    log(`  draw order: ${o.drawOrder.admittedChecked} admitted checked against drawOrder, ${o.drawOrder.mismatches} out of place; Lua draw vs the bench's ${o.drawOrder.luaDrawMismatches} different; seed hidden before / published after, commitment: ${o.drawOrder.commitmentsOk}; newcomers behind the pre-queue: ${o.drawOrder.newcomersBehind}`);
  }
  if (r.pollingShuffle) {
    const p = r.pollingShuffle;
    log(`\nPolling after a shuffled opening: ${p.settings.members.toLocaleString('en-US')} pre-queued, ${p.settings.instances} instances, positionCache (refresh ${p.settings.refreshMs} ms, exactBelowRank ${p.settings.positionCache.exactBelowRank})`);
    const rows = [
      ['after the opening, caches from the enters', p.accuracyBeforeLeaves],
      ['after the opening, fresh caches', p.accuracyFreshCaches],
      [`after ${p.accuracyAfterLeaves.left} left (polling phase, ${p.preQueue?.pollThrough === 'enter' ? 'caches from the enters' : 'fresh caches'})`, p.accuracyAfterLeaves],
    ];
    for (const [label, a] of rows) {
      if (!a) continue;
      log(`  ${label}: ${a.compared} compared; mean ${fmt(a.meanRelError * 100, 3)}%, p99 ${fmt(a.p99RelError * 100, 2)}%, max ${fmt(a.maxRelError * 100, 2)}% (exact ${a.maxRelErrorAt?.exact}, reported ${a.maxRelErrorAt?.reported}); within 1%: ${fmt(a.within1Percent * 100, 2)}%`);
      for (const [band, v] of Object.entries(a.byExactRank)) log(`    exact rank ${pad(band, 10)} ${lpad(v.members, 6)} members: mean ${fmt(v.mean * 100, 3)}%, p99 ${fmt(v.p99 * 100, 2)}%, max ${fmt(v.max * 100, 2)}%`);
    }
    log(`  sticky routing: ${fmt(p.sticky.redisScriptCallsPerPoll, 4)} Redis script calls per poll; READY: ${p.ready.admitted} admitted, ${p.ready.slowerThanOneInterval} later than one interval`);
  }
  if (r.groupCommit) {
    const g = r.groupCommit;
    log(`\nGroup commit (median ops/s of ${g.settings.rounds} rounds x ${g.settings.roundMs} ms; p50/p99 ms over all rounds; Redis CPU us/op from INFO cpu; calls/op: EVALSHA per operation, naive: commands)`);
    if (!g.settings.groupCommitOption) log('  NOTE: this build has no groupCommit option: "waitgate" and "waitgate gc off" ran the same code');
    log(`${pad('operation', 10)}${lpad('c', 6)}  ${pad('variant', 18)}${lpad('ops/s', 10)}${lpad('p50 ms', 9)}${lpad('p99 ms', 9)}${lpad('calls/op', 10)}${lpad('CPU us/op', 11)}${lpad('CPU', 7)}  errors`);
    for (const [op, byC] of Object.entries(g.results)) {
      for (const [c, cell] of Object.entries(byC)) {
        for (const [name, v] of Object.entries(cell.variants)) {
          log(`${pad(op, 10)}${lpad(c, 6)}  ${pad(name, 18)}${lpad(fmt(v.opsPerSec), 10)}${lpad(fmt(v.p50Ms, 3), 9)}${lpad(fmt(v.p99Ms, 3), 9)}${lpad(fmt(v.redisCallsPerOp, 3), 10)}${lpad(fmt(v.redisCpuUsPerOp, 2), 11)}${lpad(`${fmt(v.redisCpuShare * 100, 0)}%`, 7)}  ${v.errors}${v.lastError ? ` (${v.lastError})` : ''}`);
        }
        log(`${pad('', 18)}ratios: ${Object.entries(cell.ratios).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}`);
      }
    }
  }
  if (r.targets) {
    log('\nTargets');
    for (const [name, v] of Object.entries(r.targets)) log(`  ${v.met ? 'MET    ' : 'NOT MET'}  ${pad(name, 55)} ${v.value}  (${v.need !== undefined ? `>= ${v.need}` : `<= ${v.max}`})`);
  }
}
