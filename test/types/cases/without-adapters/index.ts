// A user of the core alone: no adapter's augmentation leaks into Express or Fastify requests.
import type { Request } from 'express';
import type { FastifyRequest } from 'fastify';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

void new WaitingQueue({ store: new MemoryStore() });
declare const req: Request;
declare const request: FastifyRequest;
// @ts-expect-error entry is added by waitgate/express only
void req.entry;
// @ts-expect-error entry is added by waitgate/fastify only
void request.entry;
