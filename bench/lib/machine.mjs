// What a bench result records about the machine it ran on: its speed moves, so every
// figure is read next to this.

import os from 'node:os';
import { redisServerVersion } from '../../scripts/redis-server.mjs';

/** The load average now, rounded (recorded at the start and the end of a run). */
export const loadAverage = () => os.loadavg().map((v) => Number(v.toFixed(2)));

/** CPUs, memory, load at start, Node, Redis and the platform. */
export function machineInfo() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverageAtStart: loadAverage(),
    node: process.version,
    redis: redisServerVersion(),
    platform: `${os.type()} ${os.release()}`,
  };
}
