// A user of waitgate/fastify: request.entry is typed on every Fastify request.
import Fastify from 'fastify';
import type { Entry } from '../../../../src/http/fastify.js';
import { queueRoutes, requireEntryToken } from '../../../../src/http/fastify.js';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

const queue = new WaitingQueue({ store: new MemoryStore() });
const app = Fastify();
void app.register(queueRoutes, { queue, memberId: (request) => request.headers['x-user'] as string | undefined, prefix: '/queue' });
app.post('/orders', { preHandler: requireEntryToken(queue, { memberId: () => 1 }) }, async (request) => {
  assert<Equal<typeof request.entry, Entry | undefined>>(true);
  return { tokenId: request.entry?.tokenId };
});
// @ts-expect-error the plugin needs a queue
void app.register(queueRoutes, { memberId: () => 'a' });
