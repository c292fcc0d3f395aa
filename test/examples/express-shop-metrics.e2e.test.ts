// The example shop's GET /metrics: waitgate/opentelemetry through the Prometheus exporter,
// scraped over HTTP as Prometheus would, with the names Prometheus gets (no browser needed;
// in the e2e project because the shop imports the built package).

import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The shop imports the built package, so the test does too (one WaitingQueue class).
import { MemoryStore, WaitingQueue } from 'waitgate';
import { createShop } from '../../examples/express-shop/app.mjs';
import { openDatabase } from '../../examples/express-shop/db.mjs';
import { createMetrics } from '../../examples/express-shop/metrics.mjs';

const db = openDatabase(':memory:');
const queue = new WaitingQueue({ store: new MemoryStore(), name: 'shop-metrics', admitRatePerSecond: 20, admitBurst: 1 });
const metrics = createMetrics(queue);
const app = createShop({ queue, db, metrics: metrics.handler });
let server: ReturnType<typeof app.listen>;
let url = '';

beforeAll(async () => {
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await metrics.shutdown();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  db.close();
});

/** The value of the sample `name{...labels}` whose labels include `labels`, from a Prometheus text page. */
function sample(page: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of page.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe('example shop: GET /metrics', () => {
  it('serves the queue in the Prometheus text format, under the documented names', async () => {
    await queue.enter('a');
    await queue.enter('b');
    expect((await queue.admit()).map((x) => x.memberId)).toEqual(['a']);

    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('set-cookie')).toBeNull(); // a scraper is no shopper
    const page = await res.text();
    const q = { waitgate_queue_name: 'shop-metrics' };

    expect(page).toMatch(/^# TYPE waitgate_queue_waiting gauge$/m);
    expect(sample(page, 'waitgate_queue_waiting', q)).toBe(1);
    expect(sample(page, 'waitgate_queue_active', q)).toBe(1);
    expect(sample(page, 'waitgate_queue_claimed', q)).toBe(0);
    expect(sample(page, 'waitgate_queue_admission_rate', q)).toBeGreaterThan(0);
    expect(page).toMatch(/^# TYPE waitgate_member_transitions_total counter$/m);
    expect(sample(page, 'waitgate_member_transitions_total', { ...q, waitgate_transition: 'entered' })).toBe(2);
    expect(sample(page, 'waitgate_member_transitions_total', { ...q, waitgate_transition: 'admitted' })).toBe(1);
    expect(sample(page, 'waitgate_queue_transitions_total', { ...q, waitgate_transition: 'entered' })).toBe(2);
    expect(page).toMatch(/^# TYPE waitgate_queue_wait_duration histogram$/m);
    expect(sample(page, 'waitgate_queue_wait_duration_count', q)).toBe(1);
    expect(sample(page, 'waitgate_queue_wait_duration_bucket', { ...q, le: '3600' })).toBe(1);
    expect(sample(page, 'waitgate_store_operation_duration_count', { ...q, waitgate_store_operation: 'enter' })).toBe(2);
  });
});
