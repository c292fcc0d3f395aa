// The example shop end to end in headless Chromium (playwright-core + Debian's chromium):
// two shoppers queue in waitgate's waiting room (/queue/room), which shows rank and wait, one is admitted and orders (SQLite
// shows the order and the stock drop), and a sold-out order keeps the token usable. Then
// the runtime controls on the page: a countdown to a drawn opening, a paused banner, a
// closed sale (banner for who waits, sold-out panel for who comes), and the operator hook.

import { copyFileSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
// The shop imports the built package, so the test does too (one WaitingQueue class).
import { MemoryStore, WaitingQueue } from 'waitgate';
import { createShop } from '../../examples/express-shop/app.mjs';
import { openDatabase } from '../../examples/express-shop/db.mjs';

const ARTIFACTS = join(import.meta.dirname, '..', '..', '.artifacts');

type Server = ReturnType<ReturnType<typeof createShop>['listen']>;

let browser: Browser;
let url: string;
const servers: Server[] = [];
const db = openDatabase(':memory:');
// Admission is driven by the test (no admitter): one member per admit() call.
const queue = new WaitingQueue({ store: new MemoryStore(), name: 'e2e', admitRatePerSecond: 20, admitBurst: 1, pollingIntervals: [{ seconds: 0.25 }] });

beforeAll(async () => {
  browser = await launchChromium();
  ({ url } = await listen(createShop({ queue, db })));
});

afterAll(async () => {
  await browser?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(app: ReturnType<typeof createShop>): Promise<{ server: Server; url: string }> {
  const s = app.listen(0, '127.0.0.1');
  servers.push(s);
  await new Promise((r) => s.once('listening', r));
  return { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/` };
}

async function shopper(at = url): Promise<{ page: Page; memberId: () => Promise<string> }> {
  const context = await browser.newContext({ viewport: { width: 760, height: 640 } });
  const page = await context.newPage();
  await page.goto(at);
  const memberId = async () => (await context.cookies()).find((c) => c.name === 'shopper')!.value;
  return { page, memberId };
}

const text = (page: Page, testId: string) => page.getByTestId(testId).textContent();
/** A text of waitgate's waiting room (/queue/room), by its slot. */
const slot = (page: Page, name: string) => page.locator(`[data-slot="${name}"]`).textContent();
const place = (n: number) => `You are number ${n} in line`;
const stockOf = (id: number) => (db.prepare('SELECT stock FROM products WHERE id = ?').get(id) as { stock: number }).stock;

describe('example shop in a browser', () => {
  it('queues two shoppers, admits one who orders, and keeps the token through a sold-out order', async () => {
    const alice = await shopper();
    await expect.poll(() => slot(alice.page, 'place-line')).toBe(place(1));
    const bob = await shopper();
    await expect.poll(() => slot(bob.page, 'place-line')).toBe(place(2));
    expect(await slot(bob.page, 'ahead')).toBe('1');
    expect(await slot(bob.page, 'wait')).toMatch(/any moment now|about \d+/);
    expect(await slot(bob.page, 'total')).toBe('2');
    mkdirSync(ARTIFACTS, { recursive: true });
    await bob.page.screenshot({ path: join(ARTIFACTS, 'waiting-room.png') });

    // Alice is admitted, orders, and the order lands in SQLite with the token id.
    expect((await queue.admit()).map((a) => a.memberId)).toEqual([await alice.memberId()]);
    const aurora = alice.page.getByRole('button', { name: /Order Aurora runner/ });
    await aurora.waitFor();
    expect(new URL(bob.page.url()).pathname).toBe('/queue/room'); // still waiting
    expect((await alice.page.context().cookies()).find((c) => c.name === 'waitgate_pass')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    const stockBefore = stockOf(1);
    await aurora.click();
    await expect.poll(() => text(alice.page, 'result')).toMatch(/confirmed/);
    const orders = db.prepare('SELECT member_id AS memberId, product_id AS productId, token_id AS tokenId FROM orders').all() as Array<{
      memberId: string;
      tokenId: string;
    }>;
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

  // Each case below has a queue (and a shop) of its own, so its controls touch nothing else.
  const ADMIN_TOKEN = 'e2e-operator-token-0123456789';

  async function shopWithControls(name: string, options: { adminToken?: string } = {}) {
    const q = new WaitingQueue({ store: new MemoryStore(), name, admitRatePerSecond: 20, admitBurst: 1, pollingIntervals: [{ seconds: 0.25 }] });
    return { queue: q, ...(await listen(createShop({ queue: q, db, ...options }))) };
  }

  /** POST /admin/controls, as the operator would with curl. */
  async function operator(at: string, body: unknown, init: { token?: string | null; contentType?: string; raw?: string } = {}) {
    const headers: Record<string, string> = { 'content-type': init.contentType ?? 'application/json' };
    const token = init.token === undefined ? ADMIN_TOKEN : init.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const response = await fetch(new URL('admin/controls', at), { method: 'POST', headers, body: init.raw ?? JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as { mode?: string; error?: { code: string; message: string } } };
  }

  /** Saves the screenshot to .artifacts/ and copies it to docs/images/ when UPDATE_DOCS_IMAGES=1. */
  async function screenshot(page: Page, name: string) {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, name) });
    if (process.env.UPDATE_DOCS_IMAGES === '1') copyFileSync(join(ARTIFACTS, name), join(import.meta.dirname, '..', '..', 'docs', 'images', name));
  }

  /** Nothing on the page reads null, NaN or undefined (rank and estimate may be null). */
  async function expectNoBlanks(page: Page) {
    expect(await page.locator('main').innerText()).not.toMatch(/\bnull\b|\bNaN\b|\bundefined\b/);
  }

  it('counts down to a scheduled opening whose places are drawn at random', async () => {
    const shop = await shopWithControls('e2e-countdown');
    await shop.queue.setControls({ opensAt: Date.now() + 120_000, shuffle: true });
    for (const early of ['early-1', 'early-2', 'early-3', 'early-4']) await shop.queue.enter(early);
    const carol = await shopper(shop.url);
    await expect.poll(() => slot(carol.page, 'countdown')).toMatch(/^(2:00|1:5\d)$/);
    expect(await slot(carol.page, 'place-line')).toMatch(/drawn at random at the opening/);
    expect(await carol.page.locator('[data-commitment] code').textContent()).toBe((await shop.queue.controls()).drawCommitment);
    expect(await slot(carol.page, 'ahead')).toBe('not drawn yet');
    expect(await slot(carol.page, 'wait')).toBe('starts at the opening');
    expect(await slot(carol.page, 'total')).toBe('5');
    expect(await carol.page.getByRole('timer').count()).toBe(1);
    expect(await carol.page.locator('.waitgate-notice').isHidden()).toBe(true);
    await expectNoBlanks(carol.page);
    // It ticks on the page's clock, between polls.
    const before = await slot(carol.page, 'countdown');
    await expect.poll(() => slot(carol.page, 'countdown'), { timeout: 3000 }).not.toBe(before);
    await screenshot(carol.page, 'waiting-room-countdown.png');
  });

  it("shows the operator's message while the sale is paused, and the rank it keeps", async () => {
    const shop = await shopWithControls('e2e-paused', { adminToken: ADMIN_TOKEN });
    for (const early of ['early-1', 'early-2', 'early-3']) await shop.queue.enter(early);
    const dave = await shopper(shop.url);
    await expect.poll(() => slot(dave.page, 'place-line')).toBe(place(4));
    const message = 'Restocking the Aurora runner: back in about ten minutes.';
    expect(await operator(shop.url, { mode: 'paused', message })).toMatchObject({ status: 200, body: { mode: 'paused' } });
    await expect.poll(() => slot(dave.page, 'notice-title')).toBe('The sale is paused');
    expect(await slot(dave.page, 'notice-message')).toBe(message);
    expect(await dave.page.locator('.waitgate-notice').isVisible()).toBe(true);
    expect(await slot(dave.page, 'place-line')).toBe(place(4));
    expect(await slot(dave.page, 'ahead')).toBe('3');
    expect(await slot(dave.page, 'wait')).toBe('on hold');
    expect(await dave.page.locator('.waitgate-opening').isHidden()).toBe(true);
    await expectNoBlanks(dave.page);
    await screenshot(dave.page, 'waiting-room-paused.png');
    // Resumed: the banner goes, the estimate comes back.
    expect((await operator(shop.url, { mode: 'open', message: null })).status).toBe(200);
    await expect.poll(() => dave.page.locator('.waitgate-notice').isHidden()).toBe(true);
    await expect.poll(() => slot(dave.page, 'wait')).toMatch(/any moment now|about \d+/);
  });

  it('closes the sale: a waiting shopper sees the closed banner, a new one the sold-out panel', async () => {
    const shop = await shopWithControls('e2e-closed', { adminToken: ADMIN_TOKEN });
    const erin = await shopper(shop.url);
    await expect.poll(() => slot(erin.page, 'place-line')).toBe(place(1));
    expect(await operator(shop.url, { mode: 'closed', message: 'Sold out, thank you!' })).toMatchObject({ status: 200, body: { mode: 'closed' } });
    await expect.poll(() => slot(erin.page, 'notice-title')).toBe('The sale is closed');
    expect(await slot(erin.page, 'notice-message')).toBe('Sold out, thank you!');
    expect(await slot(erin.page, 'place-line')).toBe(place(1));
    await expectNoBlanks(erin.page);
    mkdirSync(ARTIFACTS, { recursive: true });
    await erin.page.screenshot({ path: join(ARTIFACTS, 'waiting-room-closed-waiting.png') });

    const frank = await shopper(shop.url);
    await expect.poll(() => slot(frank.page, 'refused-message')).toBe('Sold out, thank you!');
    expect(await frank.page.getByRole('heading', { name: 'This drop is closed' }).isVisible()).toBe(true);
    expect(await frank.page.locator('.waitgate-waiting').isHidden()).toBe(true);
    expect(await frank.page.locator('.waitgate-problem').isHidden()).toBe(true);
    await expectNoBlanks(frank.page);
    await screenshot(frank.page, 'waiting-room-sold-out.png');
  });

  it('tells each waiting shopper the odds the stock gives, and shows the sold-out panel when the last pair goes', async () => {
    const shop = await shopWithControls('e2e-odds');
    await shop.queue.setControls({ stock: 2 });
    for (const early of ['early-1', 'early-2']) await shop.queue.enter(early);
    const gina = await shopper(shop.url); // third in line, two pairs left
    await expect.poll(() => slot(gina.page, 'place-line')).toBe(place(3));
    await expect.poll(() => slot(gina.page, 'odds')).toBe('2 pairs left: they will likely be gone before your turn. You keep your place in case some come back.');
    await shop.queue.setControls({ stock: 5 });
    await expect.poll(() => slot(gina.page, 'odds')).toBe('5 pairs left: enough for everyone ahead of you, and you.');
    await expectNoBlanks(gina.page);
    await screenshot(gina.page, 'shop-odds.png');
    // The last pair sold: the queue closes itself, and a newcomer sees the sold-out panel.
    await shop.queue.setControls({ stock: 1 });
    const [first] = await shop.queue.admit();
    expect(await shop.queue.consume(await shop.queue.claim(first!.memberId, first!.entryToken))).toBe(true);
    await expect.poll(() => slot(gina.page, 'notice-message')).toBe('Sold out');
    const hank = await shopper(shop.url);
    await expect.poll(() => slot(hank.page, 'refused-message')).toBe('Sold out');
    await expectNoBlanks(hank.page);
    await screenshot(hank.page, 'shop-stock-sold-out.png');
  });

  it('lets only the operator change the controls, and answers 4xx to a bad patch', async () => {
    const off = await shopWithControls('e2e-admin-off');
    expect((await operator(off.url, { mode: 'paused' })).status).toBe(403);
    expect(() => createShop({ queue: off.queue, db, adminToken: 'short' })).toThrow(/at least 16 characters/);

    const shop = await shopWithControls('e2e-admin', { adminToken: ADMIN_TOKEN });
    expect((await operator(shop.url, { mode: 'paused' }, { token: null })).status).toBe(403);
    expect((await operator(shop.url, { mode: 'paused' }, { token: `${ADMIN_TOKEN}x` })).status).toBe(403);
    expect((await fetch(new URL('admin/controls', shop.url))).status).toBe(403);
    const basic = await fetch(new URL('admin/controls', shop.url), { headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
    expect(basic.status).toBe(403);

    const badMode = await operator(shop.url, { mode: 'shut' });
    expect(badMode).toMatchObject({ status: 400, body: { error: { code: 'CONFIG_INVALID', message: expect.stringMatching(/"mode"/) } } });
    expect(await operator(shop.url, { pause: true })).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/"pause": unknown option/) } },
    });
    expect((await operator(shop.url, {})).status).toBe(400);
    expect((await operator(shop.url, [])).status).toBe(400);
    expect((await operator(shop.url, { message: 'x'.repeat(281) })).status).toBe(400);
    expect((await operator(shop.url, null, { raw: '{"mode":' })).status).toBe(400);
    expect((await operator(shop.url, null, { raw: JSON.stringify({ message: 'x'.repeat(5000) }) })).status).toBe(413);
    expect((await operator(shop.url, null, { raw: 'mode=paused', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415);
    expect((await shop.queue.controls()).version).toBe(0); // nothing bad got through

    expect(await operator(shop.url, { mode: 'paused', message: 'Back soon' })).toMatchObject({ status: 200, body: { mode: 'paused' } });
    const read = await fetch(new URL('admin/controls', shop.url), { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ mode: 'paused', message: 'Back soon' });
  });
});
