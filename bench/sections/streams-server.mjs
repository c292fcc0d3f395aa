// The instance of the streams section (bench/sections/streams.mjs), in a process of its own so
// that its CPU and memory are its own: Express with waitgate's queue routes (positionCache on,
// admission steps pushed through a subscriber connection), on loopback. Answers the parent's
// IPC messages: { cpu } -> process.cpuUsage() in µs, { memory } -> memory after a GC.

import express from 'express';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { queueRoutes } from 'waitgate/express';

const [url, name] = process.argv.slice(2);
const client = new Redis(url);
const store = new RedisStore({ client, subscriber: client.duplicate() });
const queue = new WaitingQueue({ store, name, positionCache: true, abandonAfterSeconds: null, admitRatePerSecond: 10 });
queue.on('error', () => undefined);
const app = express();
app.use('/queue', queueRoutes(queue, { memberId: (req) => req.headers['x-member'], maxStreams: 20_000 }));
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
server.keepAliveTimeout = 60_000;

process.on('message', (message) => {
  if (message.cpu) {
    const { user, system } = process.cpuUsage();
    process.send({ cpu: user + system });
  } else if (message.memory) {
    globalThis.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    process.send({ memory: { rss, heapUsed } });
  }
});
process.on('disconnect', () => process.exit(0));
