// waitgate/nestjs on @nestjs/platform-fastify against the shared behaviour table, over real HTTP.

import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { WaitgateModule } from '../../src/http/nestjs.js';
import { describeAdapter } from './adapter-suite.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';
import { listen, nestAppFactory } from './nestjs-app.js';

describeAdapter(
  'nestjs (fastify)',
  nestAppFactory(() => new FastifyAdapter()),
);
describeGate(
  'nestjs (fastify)',
  nestAppFactory(() => new FastifyAdapter()),
);
describeEventStream(
  'nestjs (fastify)',
  nestAppFactory(() => new FastifyAdapter()),
);

describe('nestjs (fastify): memberId', () => {
  it('receives the FastifyRequest', async () => {
    const seen: unknown[] = [];
    const memberId = (request: FastifyRequest) => {
      seen.push(request);
      return request.headers['x-member'] as string | undefined;
    };
    const queue = new WaitingQueue({ store: new MemoryStore() });
    const { url, close } = await listen(new FastifyAdapter(), [WaitgateModule.forRoot({ queue, memberId })], []);
    try {
      expect((await fetch(`${url}/queue/enter`, { method: 'POST', headers: { 'x-member': 'alice' } })).status).toBe(200);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toHaveProperty('raw'); // Fastify's request wraps Node's as `raw`
      expect(seen[0]).toHaveProperty('routeOptions');
    } finally {
      await close();
    }
  });
});
