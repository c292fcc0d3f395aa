// The example shop end to end in headless Chromium (playwright-core + Debian's chromium):
// two shoppers queue, the page shows rank and wait, one is admitted and orders (SQLite
// shows the order and the stock drop), and a sold-out order keeps the token usable.

import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The shop imports the built package, so the test does too (one WaitingQueue class).
import { MemoryStore, WaitingQueue } from 'waitgate';
import { createShop } from '../../examples/express-shop/app.mjs';
import { openDatabase } from '../../examples/express-shop/db.mjs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', '.artifacts');

let browser: Browser;
let server: ReturnType<ReturnType<typeof createShop>['listen']>;
let url: string;
const db = openDatabase(':memory:');
// Admission is driven by the test (no admitter): one member per admit() call.
const queue = new WaitingQueue({ store: new MemoryStore(), name: 'e2e', admitRatePerSecond: 20, admitBurst: 1, pollingIntervals: [{ seconds: 0.25 }] });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}. Install Debian's package (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  server = createShop({ queue, db }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function shopper(): Promise<{ page: Page; memberId: () => Promise<string> }> {
  const context = await browser.newContext({ viewport: { width: 760, height: 640 } });
  const page = await context.newPage();
  await page.goto(url);
  const memberId = async () => (await context.cookies()).find((c) => c.name === 'shopper')!.value;
  return { page, memberId };
}

const text = (page: Page, testId: string) => page.getByTestId(testId).textContent();
const stockOf = (id: number) => (db.prepare('SELECT stock FROM products WHERE id = ?').get(id) as { stock: number }).stock;

describe('example shop in a browser', () => {
  it('queues two shoppers, admits one who orders, and keeps the token through a sold-out order', async () => {
    const alice = await shopper();
    await expect.poll(() => text(alice.page, 'rank-number')).toBe('1');
    const bob = await shopper();
    await expect.poll(() => text(bob.page, 'rank-number')).toBe('2');
    expect(await text(bob.page, 'ahead')).toBe('1');
    expect(await text(bob.page, 'wait')).toMatch(/any moment now|about \d+/);
    expect(await text(bob.page, 'total')).toBe('2');
    mkdirSync(ARTIFACTS, { recursive: true });
    await bob.page.screenshot({ path: join(ARTIFACTS, 'waiting-room.png') });

    // Alice is admitted, orders, and the order lands in SQLite with the token id.
    expect((await queue.admit()).map((a) => a.memberId)).toEqual([await alice.memberId()]);
    const aurora = alice.page.getByRole('button', { name: /Order Aurora runner/ });
    await aurora.waitFor();
    expect(await bob.page.locator('#admitted').isHidden()).toBe(true);
    const stockBefore = stockOf(1);
    await aurora.click();
    await expect.poll(() => text(alice.page, 'result')).toMatch(/confirmed/);
    const orders = db.prepare('SELECT member_id AS memberId, product_id AS productId, token_id AS tokenId FROM orders').all() as Array<{ memberId: string; tokenId: string }>;
    expect(orders).toEqual([{ memberId: await alice.memberId(), productId: 1, tokenId: expect.stringMatching(/^[0-9a-f]{32}$/) }]);
    expect(stockOf(1)).toBe(stockBefore - 1);
    expect(await queue.state(await alice.memberId())).toBe('NOT_ENTERED');

    // Bob is admitted; the product he picks sells out before he clicks.
    await new Promise((r) => setTimeout(r, 100)); // let the bucket refill one admission
    expect((await queue.admit()).map((a) => a.memberId)).toEqual([await bob.memberId()]);
    const highTop = bob.page.getByRole('button', { name: /Order Midnight high-top/ });
    await highTop.waitFor();
    db.prepare('UPDATE products SET stock = 0 WHERE id = 2').run();
    await highTop.click();
    await expect.poll(() => text(bob.page, 'result')).toMatch(/Sold out/);
    expect(await queue.state(await bob.memberId())).toBe('READY');
    await bob.page.getByRole('button', { name: /Order Glacier slip-on/ }).click();
    await expect.poll(() => text(bob.page, 'result')).toMatch(/confirmed/);
    const bobs = db.prepare('SELECT product_id AS productId FROM orders WHERE member_id = ?').all(await bob.memberId());
    expect(bobs).toEqual([{ productId: 3 }]);
  });
});
