#!/usr/bin/env node
// Compares this checkout's waitgate with other builds of it, interleaved in one process
// against one spawned Redis (so the machine's noise hits both alike):
//   node bench/ab.mjs /path/to/other/checkout[=label] ... [--only=enter,position] [--rounds=7]
// Each path is a waitgate checkout that was built (npm run build); its dist/index.js is loaded.

import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startBenchRedisServer } from '../scripts/redis-server.mjs';
import { printReport } from './lib/report.mjs';
import { runMicro } from './sections/micro.mjs';

const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['enter', 'position'];
const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 7);
const roundMs = Number(args.find((a) => a.startsWith('--round-ms='))?.slice(11) ?? 600);
const extraPackages = [];
for (const a of args.filter((x) => !x.startsWith('--'))) {
  const [path, label = `other${extraPackages.length + 1}`] = a.split('=');
  extraPackages.push({ label, pkg: await import(pathToFileURL(join(resolve(path), 'dist', 'index.js')).href) });
}
const redis = await startBenchRedisServer();
try {
  const micro = await runMicro({ url: redis.url, rounds, roundMs, warmMs: 300, only, extraPackages });
  micro.settings.rounds = rounds;
  printReport({ micro }, console.log);
  console.log(JSON.stringify(Object.fromEntries(Object.entries(micro.results).map(([op, byC]) => [op, Object.fromEntries(Object.entries(byC).map(([c, v]) => [c, v.ratios]))]))));
} finally {
  await redis.stop();
}
