// Helpers of test/faults/hostile-input.test.ts: one small app per HTTP adapter, a raw HTTP
// client (repeated and oversized headers, bodies on any method), and Redis probes
// (script calls from INFO commandstats, a snapshot of every key under a prefix).

import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import type { Redis } from 'ioredis';
import type { WaitingQueue } from '../../src/index.js';
import * as expressAdapter from '../../src/http/express.js';
import * as fastifyAdapter from '../../src/http/fastify.js';
import * as koaAdapter from '../../src/http/koa.js';

export type AdapterKind = 'express' | 'fastify' | 'koa';
export const ADAPTERS: readonly AdapterKind[] = ['express', 'fastify', 'koa'];

// ---------------------------------------------------------------------------------------
// Member ids across HTTP. The apps take the member from `x-member-json` (base64url of a
// tagged JSON value, so that any value a session could hold reaches the resolver: numbers
// that JSON cannot spell, strings with control characters, objects) or else `x-member`.

type Tagged = { $num: string } | { $undefined: true } | unknown;

/** Encodes a value for the `x-member-json` header. */
export function encodeMember(value: unknown): string {
  const tag = (v: unknown): Tagged => {
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))) return { $num: Object.is(v, -0) ? '-0' : String(v) };
    if (v === undefined) return { $undefined: true };
    return v;
  };
  return Buffer.from(JSON.stringify(tag(value)), 'utf8').toString('base64url');
}

function decodeMember(encoded: string): unknown {
  const v = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Tagged;
  if (typeof v === 'object' && v !== null && '$num' in v) return Number((v as { $num: string }).$num);
  if (typeof v === 'object' && v !== null && '$undefined' in v) return undefined;
  return v;
}

/** The resolver every app uses: what an app's session would hand over. */
export function memberFrom(headers: IncomingHttpHeaders): unknown {
  const encoded = headers['x-member-json'];
  if (typeof encoded === 'string') return decodeMember(encoded);
  return headers['x-member'];
}

// ---------------------------------------------------------------------------------------
// The apps: queue routes under /queue, POST /orders behind the guard (auto settle), 201.

export interface RunningApp {
  port: number;
  close(): Promise<void>;
  /** Requests that reached the order handler. */
  orders: number;
}

export async function startApp(kind: AdapterKind, queue: WaitingQueue): Promise<RunningApp> {
  // The resolvers hand the library whatever the session holds; the adapters' types expect a member id.
  const memberId = (req: { headers: IncomingHttpHeaders }) => memberFrom(req.headers) as string | undefined;
  const state = { orders: 0 };
  if (kind === 'express') {
    const app = express();
    app.use('/queue', expressAdapter.queueRoutes(queue, { memberId }));
    app.post('/orders', expressAdapter.requireEntryToken(queue, { memberId }), (req, res) => {
      state.orders++;
      res.status(201).json({ tokenId: req.entry?.tokenId ?? null });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      get orders() {
        return state.orders;
      },
    };
  }
  if (kind === 'fastify') {
    const app = Fastify();
    await app.register(fastifyAdapter.queueRoutes, { queue, memberId, prefix: '/queue' });
    app.post('/orders', { preHandler: fastifyAdapter.requireEntryToken(queue, { memberId }) }, async (request, reply) => {
      state.orders++;
      return reply.code(201).send({ tokenId: request.entry?.tokenId ?? null });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      port: (app.server.address() as AddressInfo).port,
      close: () => app.close(),
      get orders() {
        return state.orders;
      },
    };
  }
  const app = new Koa();
  app.silent = true; // a 500 would show in the status; keep the log quiet
  app.use(koaAdapter.queueRoutes(queue, { memberId: (ctx) => memberId(ctx), prefix: '/queue' }));
  const guard = koaAdapter.requireEntryToken(queue, { memberId: (ctx) => memberId(ctx) });
  app.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== '/orders') return next();
    await guard(ctx, async () => {
      state.orders++;
      ctx.status = 201;
      ctx.body = { tokenId: ctx.state.entry?.tokenId ?? null };
    });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    get orders() {
      return state.orders;
    },
  };
}

// ---------------------------------------------------------------------------------------
// A raw HTTP client: any method with a body, repeated headers (an array value sends one
// header line per item), headers over Node's 16 KiB limit. One connection per request.

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined. */
  json: unknown;
}

export function send(port: number, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // Node frames a GET or DELETE body only with an explicit content-length.
    const framed = body === undefined ? headers : { 'content-length': Buffer.byteLength(body), ...headers };
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: framed, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', () => undefined);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    // The server may answer (431, or before reading a body it does not need) and close
    // while we still write: that is not a failure once an answer arrived.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** The error code of a waitgate error body. */
export const errorCode = (r: RawResponse) => (r.json as { error?: { code?: string } } | undefined)?.error?.code;

// ---------------------------------------------------------------------------------------
// Redis probes.

/** Script executions so far on the server (EVAL, EVALSHA and their _RO forms, FCALL). */
export async function scriptCalls(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

/** Every key under `{<prefix>:`, by SCAN (tests only). */
export async function keysUnder(admin: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

/** Every key under a prefix with its whole content: equal snapshots mean nothing was written. */
export async function snapshot(admin: Redis, prefix: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of await keysUnder(admin, prefix)) {
    const type = await admin.type(key);
    out[key] = type === 'hash' ? await admin.hgetall(key) : type === 'zset' ? await admin.zrange(key, 0, -1, 'WITHSCORES') : `<${type}>`;
  }
  return out;
}
