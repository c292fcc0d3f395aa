// waitgate/fastify against the shared behaviour table, over real HTTP.

import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { queueRoutes, requireEntryToken } from '../../src/http/fastify.js';
import { describeAdapter, memberOf, orderBehaviour, type AppFactory } from './adapter-suite.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';

const fastifyApp: AppFactory = async ({ queue, settle, onStoreUnavailable, onOrder, routes }) => {
  const app = Fastify();
  const memberId = (request: { headers: Record<string, string | string[] | undefined> }) => memberOf(request.headers);
  await app.register(queueRoutes, { queue, memberId, prefix: '/queue', ...routes });
  app.post(
    '/orders',
    { preHandler: requireEntryToken(queue, { memberId, settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) }) },
    async (request, reply) => {
      onOrder(request.entry);
      const { status, body } = await orderBehaviour(request.headers, request.entry);
      return reply.code(status).send(body);
    },
  );
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
};

describeAdapter('fastify', fastifyApp);
describeGate('fastify', fastifyApp);

describe('fastify: request.entry', () => {
  it('is declared with decorateRequest by the queue routes plugin (once, for any number of queues)', async () => {
    const store = new MemoryStore();
    const app = Fastify();
    const memberId = () => 'alice';
    await app.register(queueRoutes, { queue: new WaitingQueue({ store, name: 'a' }), memberId, prefix: '/a' });
    await app.register(queueRoutes, { queue: new WaitingQueue({ store, name: 'b' }), memberId, prefix: '/b' });
    await app.ready();
    expect(app.hasRequestDecorator('entry')).toBe(true);
    await app.close();
  });
});
describeEventStream('fastify', fastifyApp);
