// waitgate/dashboard over real HTTP, mounted on node:http (basePath) and on Express (app.use):
// authorize on every route, the same-origin rule for state changes, input checks that answer
// 400 and write nothing, the headers, and a store that is down (503, never 500).

import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createDashboard, MAX_BODY_BYTES, type DashboardOptions } from '../../src/dashboard/index.js';
import { MemoryStore, WaitgateConfigError, WaitingQueue, type Store } from '../../src/index.js';
import { storeWith } from '../support/store-with.js';

const MOUNT = '/ops/waitgate';
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  json: () => { error?: { code: string; message: string; option?: string } } & Record<string, unknown>;
}

/** One request with exactly these headers (fetch would add its own Sec-Fetch-* and Origin). */
function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Options = Partial<DashboardOptions>;
const MOUNTS = {
  'node:http': async (options: DashboardOptions) => {
    const dashboard = createDashboard({ basePath: MOUNT, ...options });
    return listen(createServer((req, res) => void dashboard(req, res)));
  },
  express: async (options: DashboardOptions) => {
    const app = express();
    app.use(MOUNT, createDashboard(options));
    app.get('/', (_req, res) => void res.send('the shop'));
    return listen(createServer(app));
  },
};

function queueOn(store: Store = new MemoryStore(), name = 'orders') {
  return new WaitingQueue({ store, name, admitRatePerSecond: 5, maxActive: 20, operationTimeoutMs: 200, limits: { maxRatePerSecond: 1000 } });
}

/** A dashboard whose `authorize` lets through requests with `x-operator: yes`. */
async function start(mount: keyof typeof MOUNTS, options: Options = {}) {
  const queue = queueOn();
  const base = await MOUNTS[mount]({ queues: [queue], authorize: (req) => req.headers['x-operator'] === 'yes', ...options });
  const origin = base;
  const operator = { 'x-operator': 'yes' };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    call(
      base,
      'POST',
      `${MOUNT}/api/controls`,
      { ...operator, origin, 'content-type': 'application/json', ...headers },
      typeof body === 'string' ? body : JSON.stringify(body),
    );
  return {
    queue,
    base,
    origin,
    operator,
    post,
    get: (path: string, headers: Record<string, string> = operator) => call(base, 'GET', `${MOUNT}${path}`, headers),
  };
}

describe('createDashboard options', () => {
  const queue = queueOn();

  it('throws WaitgateConfigError without authorize', () => {
    const missing = () => createDashboard({ queues: [queue] } as unknown as DashboardOptions);
    expect(missing).toThrow(WaitgateConfigError);
    expect(missing).toThrow(/authorize/);
    expect(() => createDashboard({ queues: [queue], authorize: true } as unknown as DashboardOptions)).toThrow(WaitgateConfigError);
  });

  it('refuses no queues, two queues of one name, unknown options and bad paths', () => {
    const authorize = () => true;
    expect(() => createDashboard({ queues: [], authorize })).toThrow(WaitgateConfigError);
    expect(() => createDashboard({ queues: [queue, queueOn()], authorize })).toThrow(/two queues are named "orders"/);
    expect(() => createDashboard({ queues: [queue], authorize, basepath: '/x' } as unknown as DashboardOptions)).toThrow(/basepath/);
    expect(() => createDashboard({ queues: [queue], authorize, basePath: 'ops' })).toThrow(/basePath/);
    expect(() => createDashboard({ queues: [{} as WaitingQueue], authorize })).toThrow(/queues/);
    expect(() => createDashboard({ queues: [queue], authorize, origin: 'https://ops.example.com/path' })).toThrow(/origin/);
    expect(() => createDashboard({ queues: { a: queue, b: queueOn() }, authorize })).not.toThrow();
  });
});

describe.each(Object.keys(MOUNTS) as Array<keyof typeof MOUNTS>)('dashboard on %s', (mount) => {
  it('answers 403 to every route when authorize does not pass, and the page when it does', async () => {
    const { base, post, get } = await start(mount);
    for (const path of ['/', '/api/queues', '/api/queues/orders', '/api/nothing']) {
      const answer = await get(path, {});
      expect(answer.status, path).toBe(403);
      expect(answer.json().error!.code).toBe('FORBIDDEN');
    }
    expect((await post({ queue: 'orders', patch: { mode: 'paused' } }, { 'x-operator': 'no' })).status).toBe(403);
    expect((await call(base, 'GET', `${MOUNT}/`, { 'x-operator': 'yes' })).status).toBe(200);
  });

  it('serves one self-contained page under a strict policy', async () => {
    const { get } = await start(mount);
    const page = await get('/');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const csp = page.headers['content-security-policy']!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[^']+' 'sha256-[^']+';/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.text).toContain('uPlot v1.6.32');
    expect(page.text).toContain('Permission is hereby granted'); // uPlot's license notice travels with it
    expect(page.text).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet/);
    const api = await get('/api/queues');
    expect(api.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(api.headers['cache-control']).toBe('no-store');
  });

  it('redirects the mount without its trailing slash, and answers 404 and 405 under it', async () => {
    const { base, get, operator } = await start(mount);
    const bare = await call(base, 'GET', `${MOUNT}?x=1`, operator);
    expect(bare.status).toBe(302);
    expect(bare.headers.location).toBe('./waitgate/?x=1');
    expect((await get('/api/nothing')).status).toBe(404);
    expect((await get('/api/queues/nope')).status).toBe(404);
    expect((await get('/api/controls')).status).toBe(405);
    expect((await get('/api/controls')).headers.allow).toBe('POST');
  });

  it('reads the queues, and stats with the controls in force, never a token', async () => {
    const { queue, get } = await start(mount);
    await queue.enter('alice');
    await queue.admit();
    await queue.enter('bob');
    const token = (await queue.token('alice'))!.entryToken;
    expect((await get('/api/queues')).json()).toEqual({ queues: [{ name: 'orders' }], readOnly: false });
    const answer = await get('/api/queues/orders');
    expect(answer.status).toBe(200);
    const body = answer.json() as { stats: { waiting: number; active: number }; controls: { mode: string; maxActive: number } };
    expect(body.stats).toMatchObject({ waiting: 1, active: 1 });
    expect(body.controls).toMatchObject({ mode: 'open', maxActive: 20, admitRatePerSecond: 5 });
    expect(answer.text).not.toContain(token);
  });

  it('applies a same-origin POST: pause', async () => {
    const { queue, post } = await start(mount);
    const answer = await post({ queue: 'orders', patch: { mode: 'paused', message: 'Back soon' } });
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ queue: 'orders', controls: { mode: 'paused', message: 'Back soon', version: 1 } });
    expect(await queue.controls()).toMatchObject({ mode: 'paused', message: 'Back soon' });
    const resumed = await post({ queue: 'orders', patch: { mode: 'open', message: null } }, { 'sec-fetch-site': 'same-origin' });
    expect(resumed.json()).toMatchObject({ controls: { mode: 'open', message: null, version: 2 } });
  });

  it('records what authorize returns as the actor of a change, and shows the log', async () => {
    const { queue, post, get } = await start(mount, { authorize: (req) => (req.headers['x-operator'] === 'yes' ? 'alice@ops' : false) });
    expect((await post({ queue: 'orders', patch: { safetyNet: true } })).status).toBe(200);
    const [entry] = await queue.controlsLog();
    expect(entry).toMatchObject({ actor: 'alice@ops', patch: { safetyNet: true }, version: 1 });
    const body = (await get('/api/queues/orders')).json() as { log: unknown[]; controls: { safetyNet: boolean } };
    expect(body.log).toEqual([entry]);
    expect(body.controls.safetyNet).toBe(true);
    // Beyond the queue's limits: 400 naming the field, nothing written.
    const refused = await post({ queue: 'orders', patch: { admitRatePerSecond: 5000 } });
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'CONFIG_INVALID', option: 'patch.admitRatePerSecond' } });
    expect(await queue.controlsLog()).toHaveLength(1);
  });

  it('refuses a state change from anywhere but its own origin, and writes nothing', async () => {
    const { queue, base, operator } = await start(mount);
    const patch = JSON.stringify({ queue: 'orders', patch: { mode: 'paused' } });
    const json = { ...operator, 'content-type': 'application/json' };
    const refused: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: base.replace('127.0.0.1', 'localhost') },
      { origin: base.replace('http:', 'https:') },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: base, 'sec-fetch-site': 'cross-site' },
      {}, // neither header: not a browser on our page
    ];
    for (const headers of refused) {
      const answer = await call(base, 'POST', `${MOUNT}/api/controls`, { ...json, ...headers }, patch);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await queue.controls()).version).toBe(0);
    const sameOrigin = await call(base, 'POST', `${MOUNT}/api/controls`, { ...json, 'sec-fetch-site': 'same-origin' }, patch);
    expect(sameOrigin.status).toBe(200);
    expect((await queue.controls()).mode).toBe('paused');
  });

  it('answers 400 with a typed body to bad input, never 500, and writes nothing', async () => {
    const { queue, post } = await start(mount);
    const cases: Array<[body: unknown, code: string, option?: string]> = [
      ['{"queue": "orders", "patch": {', 'BAD_REQUEST'],
      ['', 'BAD_REQUEST'],
      ['[1]', 'BAD_REQUEST'],
      [{ queue: 'orders', patch: { mode: 'paused', speed: 2 } }, 'CONFIG_INVALID', 'patch.speed'],
      [{ queue: 'orders', patch: { mode: 'asleep' } }, 'CONFIG_INVALID', 'patch.mode'],
      [{ queue: 'orders', patch: { admitRatePerSecond: -1 } }, 'CONFIG_INVALID', 'patch.admitRatePerSecond'],
      [{ queue: 'orders', patch: { message: 'x'.repeat(281) } }, 'CONFIG_INVALID', 'patch.message'],
      // Beyond the queue's limits (the guardrails), whoever sends it.
      [{ queue: 'orders', patch: { admitRatePerSecond: 1001 } }, 'CONFIG_INVALID', 'patch.admitRatePerSecond'],
      [{ queue: 'orders', patch: {} }, 'CONFIG_INVALID'],
      [{ queue: 'orders', patch: 'paused' }, 'BAD_REQUEST', 'patch'],
      [{ queue: 'orders' }, 'BAD_REQUEST', 'patch'],
      [{ queue: 'shoes', patch: { mode: 'paused' } }, 'UNKNOWN_QUEUE', 'queue'],
      [{ queue: 7, patch: { mode: 'paused' } }, 'BAD_REQUEST', 'queue'],
      [{ queue: 'orders', patch: { mode: 'paused' }, force: true }, 'BAD_REQUEST', 'force'],
      [{ queue: '__proto__', patch: { mode: 'paused' } }, 'UNKNOWN_QUEUE', 'queue'],
    ];
    for (const [body, code, option] of cases) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.json().error).toMatchObject({ code, ...(option ? { option } : {}) });
    }
    expect((await post({ queue: 'orders', patch: { mode: 'paused' } }, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post({ queue: 'orders', patch: { mode: 'paused' } }, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    const huge = await post({ queue: 'orders', patch: { message: 'x'.repeat(MAX_BODY_BYTES) } });
    expect(huge.status).toBe(413);
    expect(huge.json().error!.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await queue.controls()).toMatchObject({ mode: 'open', version: 0 });
  });

  it('answers 503 when the store is down, for reads and changes', async () => {
    const down = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const broken = queueOn(storeWith(new MemoryStore(), { stats: down, controls: down, setControls: down }));
    const { base, operator } = await start(mount, { queues: [broken] });
    const read = await call(base, 'GET', `${MOUNT}/api/queues/orders`, operator);
    expect(read.status).toBe(503);
    expect(read.json().error!.code).toBe('STORE_UNAVAILABLE');
    expect(read.headers['retry-after']).toBe('2');
    const write = await call(
      base,
      'POST',
      `${MOUNT}/api/controls`,
      { ...operator, origin: base, 'content-type': 'application/json' },
      JSON.stringify({ queue: 'orders', patch: { mode: 'paused' } }),
    );
    expect(write.status).toBe(503);
  });
});

describe('dashboard details', () => {
  it('refuses (403) when authorize throws or answers anything but true or a name, and awaits an async one', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const throwing = await start('node:http', {
        authorize: () => {
          throw new Error('session store down');
        },
      });
      expect((await throwing.get('/')).status).toBe(403);
      const truthy = await start('node:http', { authorize: (() => 1) as unknown as () => boolean });
      expect((await truthy.get('/')).status).toBe(403);
      const unnamed = await start('node:http', { authorize: () => '' });
      expect((await unnamed.get('/')).status).toBe(403);
      const later = await start('node:http', { authorize: async (req) => req.headers['x-operator'] === 'yes' });
      expect((await later.get('/')).status).toBe(200);
      await new Promise((r) => setImmediate(r));
      expect(warnings.join('\n')).toMatch(/authorize\(\) threw.*session store down/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('lets a read-only dashboard read but not change', async () => {
    const { queue, post, get } = await start('node:http', { readOnly: true });
    expect((await get('/api/queues')).json()).toMatchObject({ readOnly: true });
    expect((await post({ queue: 'orders', patch: { mode: 'paused' } })).status).toBe(403);
    expect((await queue.controls()).version).toBe(0);
  });

  it('switches between queues given as a record, and refuses an API read from another site', async () => {
    const shoes = queueOn(new MemoryStore(), 'shoes');
    const { base, operator, post } = await start('node:http', { queues: { Orders: queueOn(), 'Shoes & boots': shoes } });
    expect((await call(base, 'GET', `${MOUNT}/api/queues`, operator)).json().queues).toEqual([{ name: 'Orders' }, { name: 'Shoes & boots' }]);
    expect((await post({ queue: 'Shoes & boots', patch: { maxActive: 3 } })).status).toBe(200);
    expect((await shoes.controls()).maxActive).toBe(3);
    const read = await call(base, 'GET', `${MOUNT}/api/queues/${encodeURIComponent('Shoes & boots')}`, operator);
    expect(read.json()).toMatchObject({ queue: 'Shoes & boots', controls: { maxActive: 3 } });
    expect((await call(base, 'GET', `${MOUNT}/api/queues/Orders`, { ...operator, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await call(base, 'GET', `${MOUNT}/api/queues/%E0%A4%A`, operator)).status).toBe(400);
  });

  it('on node:http: 404 outside basePath without next, next() with it; the configured origin', async () => {
    const queue = queueOn();
    const dashboard = createDashboard({ queues: [queue], authorize: () => true, basePath: `${MOUNT}/`, origin: 'https://ops.example.com' });
    const base = await listen(createServer((req, res) => void dashboard(req, res, req.url === '/shop' ? () => res.writeHead(200).end('the shop') : undefined)));
    expect((await call(base, 'GET', '/elsewhere')).status).toBe(404);
    expect((await call(base, 'GET', `${MOUNT}x/`)).status).toBe(404);
    expect((await call(base, 'GET', '/shop')).text).toBe('the shop');
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const body = JSON.stringify({ queue: 'orders', patch: { mode: 'closed' } });
    expect((await call(base, 'POST', `${MOUNT}/api/controls`, { ...json, origin: base }, body)).status).toBe(403);
    expect((await call(base, 'POST', `${MOUNT}/api/controls`, { ...json, origin: 'https://ops.example.com' }, body)).status).toBe(200);
  });

  it('on Express: reads a body that express.json() parsed first, and follows trust proxy for the origin', async () => {
    const queue = queueOn();
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(express.json());
    app.use(MOUNT, createDashboard({ queues: [queue], authorize: () => true }));
    const base = await listen(createServer(app));
    const body = JSON.stringify({ queue: 'orders', patch: { mode: 'paused' } });
    const headers = { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' };
    expect((await call(base, 'POST', `${MOUNT}/api/controls`, { ...headers, origin: base }, body)).status).toBe(403);
    expect((await call(base, 'POST', `${MOUNT}/api/controls`, { ...headers, origin: 'https://shop.example' }, body)).status).toBe(200);
    expect((await queue.controls()).mode).toBe('paused');
  });
});

describe('dashboard on Fastify and Koa, mounted as docs/dashboard.md shows', () => {
  async function pauseThrough(base: string, queue: WaitingQueue) {
    expect((await call(base, 'GET', `${MOUNT}/`)).status).toBe(200);
    expect((await call(base, 'GET', MOUNT)).headers.location).toBe('./waitgate/');
    const body = JSON.stringify({ queue: 'orders', patch: { mode: 'paused' } });
    expect((await call(base, 'POST', `${MOUNT}/api/controls`, { 'content-type': 'application/json', origin: 'https://evil.example' }, body)).status).toBe(403);
    const answer = await call(base, 'POST', `${MOUNT}/api/controls`, { 'content-type': 'application/json', origin: base }, body);
    expect(answer.status).toBe(200);
    expect((await queue.controls()).mode).toBe('paused');
    expect((await call(base, 'GET', '/')).text).toBe('the shop');
  }

  it('Fastify: an onRequest hook that hands the raw request over', async () => {
    const { default: Fastify } = await import('fastify');
    const queue = queueOn();
    const dashboard = createDashboard({ queues: [queue], authorize: () => true, basePath: MOUNT });
    const fastify = Fastify();
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.url !== MOUNT && !request.url.startsWith(`${MOUNT}/`) && !request.url.startsWith(`${MOUNT}?`)) return done();
      reply.hijack();
      void dashboard(request.raw, reply.raw);
    });
    fastify.get('/', async () => 'the shop');
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    try {
      await pauseThrough(`http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`, queue);
    } finally {
      await fastify.close();
    }
  });

  it('Koa: a middleware that leaves the response to the dashboard', async () => {
    const { default: Koa } = await import('koa');
    const queue = queueOn();
    const dashboard = createDashboard({ queues: [queue], authorize: () => true, basePath: MOUNT });
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== MOUNT && !ctx.path.startsWith(`${MOUNT}/`)) return next();
      ctx.respond = false;
      await dashboard(ctx.req, ctx.res);
    });
    app.use((ctx) => {
      ctx.body = 'the shop';
    });
    const handle = app.callback();
    await pauseThrough(await listen(createServer((req, res) => void handle(req, res))), queue);
  });
});
