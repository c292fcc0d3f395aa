// waitgate/dashboard in headless Chromium (playwright-core + Debian's chromium): the page loads
// under its strict CSP, its charts move while a simulated crowd runs, "Pause" + confirm pauses the
// queue, a request that authorize refuses gets 403, and a cross-site POST (a form and a fetch
// from another site, in the operator's browser with its session cookie) is refused. Then the
// example shop's mount behind HTTP Basic auth. Saves .artifacts/dashboard.png, and
// docs/images/dashboard.png with UPDATE_DOCS_IMAGES=1.

import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { createDashboard } from '../../src/dashboard/index.js';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { startCrowd, type Crowd } from './crowd.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, '.artifacts');
// The operator's session: a cookie that even a cross-site form post carries (SameSite=None), the
// worst case for request forgery, so that only the dashboard's same-origin rule stands in the way.
const SESSION = 'e2e-operator-session';
const isOperator = (req: IncomingMessage) => /(?:^|;\s*)ops=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] === SESSION;

let browser: Browser;
let operator: BrowserContext;
let page: Page;
let url: string;
let crowd: Crowd;
const servers: Server[] = [];
const problems: string[] = [];
/** Every POST the dashboard answered: who sent it and what it got. */
const posts: Array<{ origin: string | undefined; site: string | undefined; cookie: boolean; status: number }> = [];

const queue = new WaitingQueue({
  store: new MemoryStore(),
  name: 'sneaker-drop',
  admitRatePerSecond: 4,
  maxActive: 25,
  entryTokenTtlSeconds: 6,
  lanes: [{ name: 'vip', share: 0.25 }],
});
const other = new WaitingQueue({ store: new MemoryStore(), name: 'concert-tickets' });

async function listen(server: Server, host = '127.0.0.1'): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host === '127.0.0.1' ? '127.0.0.1' : 'localhost'}:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  browser = await launchChromium();
  await queue.setControls({ message: 'Thank you for waiting: the drop is live.' });
  await queue.addCodes('vip', ['VIP-1', 'VIP-2', 'VIP-3', 'VIP-4']);
  for (const code of ['VIP-1', 'VIP-2', 'VIP-3']) await queue.enter(`guest-${code}`, { code });
  const app = express();
  app.use((req, res, next) => {
    if (req.method === 'POST')
      res.on('finish', () => posts.push({ origin: req.headers.origin, site: req.get('sec-fetch-site'), cookie: isOperator(req), status: res.statusCode }));
    next();
  });
  // authorize names the operator: the name is the actor of their changes in the controls log.
  app.use('/ops/waitgate', createDashboard({ queues: [queue, other], authorize: (req) => (isOperator(req) ? 'ops@example' : false) }));
  url = `${await listen(createServer(app))}/ops/waitgate/`;
  crowd = startCrowd(queue, { arrivals: (t) => 6 + 4 * Math.sin(t / 4) });
  operator = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await operator.addCookies([{ name: 'ops', value: SESSION, domain: '127.0.0.1', path: '/', sameSite: 'None', secure: true, httpOnly: true }]);
  page = await operator.newPage();
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 403/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
});

afterAll(async () => {
  await crowd?.stop();
  await browser?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const points = (chart: string) => page.getByTestId(`chart-${chart}`).getAttribute('data-points').then(Number);
const pixels = (chart: string) =>
  page
    .getByTestId(`chart-${chart}`)
    .locator('canvas')
    .evaluate((canvas) => (canvas as unknown as { toDataURL(): string }).toDataURL());

describe('dashboard in a browser', () => {
  it('loads under its CSP, and its charts move while the crowd runs', async () => {
    const response = await page.goto(url);
    expect(response!.status()).toBe(200);
    await expect.poll(() => page.getByTestId('status').getAttribute('data-state')).toBe('live');
    expect(await page.getByTestId('mode').textContent()).toBe('Open');
    expect(await page.getByTestId('mode-message').textContent()).toBe('Thank you for waiting: the drop is live.');
    expect(await page.getByTestId('queue-select').locator('option').allTextContents()).toEqual(['sneaker-drop', 'concert-tickets']);

    await expect.poll(() => points('waiting')).toBeGreaterThanOrEqual(2);
    const before = { points: await points('waiting'), waiting: await pixels('waiting'), admitted: await pixels('admitted') };
    await page.waitForTimeout(3000);
    expect(await points('waiting')).toBeGreaterThanOrEqual(before.points + 2);
    expect(await pixels('waiting')).not.toBe(before.waiting);
    expect(await pixels('admitted')).not.toBe(before.admitted);
    expect(Number((await page.getByTestId('kpi-waiting').textContent())!.replace(/\D/g, ''))).toBeGreaterThan(0);
    // The invite-code lanes under the waiting count: the default lane, then vip with its codes left.
    expect(await page.getByTestId('kpi-lanes').textContent()).toMatch(/^default \d+ \(75 %\) · vip \d+ \(25 %, 1 code uses left\)$/);
    await expect.poll(() => page.locator('#total-admitted').textContent()).toMatch(/^[1-9]/);

    // A few more seconds of history, then the picture for the docs.
    await page.waitForTimeout(14_000);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png') });
    if (process.env.UPDATE_DOCS_IMAGES === '1') copyFileSync(join(ARTIFACTS, 'dashboard.png'), join(ROOT, 'docs', 'images', 'dashboard.png'));
    expect(problems).toEqual([]); // no CSP violation, no script error
  });

  it('answers 403 to a browser that authorize refuses', async () => {
    const stranger = await browser.newContext();
    try {
      const response = await (await stranger.newPage()).goto(url);
      expect(response!.status()).toBe(403);
      expect(await response!.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    } finally {
      await stranger.close();
    }
  });

  it('refuses a cross-site POST from the operator browser: a form and a fetch', async () => {
    const version = (await queue.controls()).version;
    const target = new URL('api/controls', url).toString();
    const evil = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html>
          <form id="f" method="POST" action="${target}" enctype="text/plain">
            <input name='{"queue":"sneaker-drop","patch":{"mode":"closed"},"x":"' value='"}'>
          </form>
          <button id="fetch">fetch</button>
          <script>
            document.getElementById('fetch').onclick = () =>
              fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"queue":"sneaker-drop","patch":{"mode":"closed"}}' });
          </script>`);
      }),
      'localhost',
    );
    const attacker = await operator.newPage();
    try {
      await attacker.goto(evil);
      // The form is a top-level navigation: the session cookie goes with it, so authorize passes
      // and the same-origin rule refuses it.
      const [submitted] = await Promise.all([
        attacker.waitForResponse(target),
        attacker.locator('#f').evaluate((form) => (form as unknown as { submit(): void }).submit()),
      ]);
      expect(submitted.status()).toBe(403);
      expect(await submitted.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/same origin/) } });
      // A fetch from the other site (whether or not the browser sends the cookie along) is refused too.
      await attacker.goto(evil);
      const sent = posts.length;
      await attacker.click('#fetch');
      await expect.poll(() => posts.length).toBe(sent + 1);
      expect(posts.at(-1)).toMatchObject({ origin: evil, site: 'cross-site', status: 403 });
    } finally {
      await attacker.close();
    }
    expect(await queue.controls()).toMatchObject({ mode: 'open', version });
  });

  it('pauses the queue with "Pause" and the confirmation', async () => {
    await page.getByRole('button', { name: 'Pause' }).click();
    const dialog = page.getByTestId('confirm-dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(JSON.parse((await page.getByTestId('confirm-patch').textContent())!)).toEqual({ mode: 'paused' });
    await dialog.getByRole('textbox').fill('Restocking: back in five minutes');
    expect(JSON.parse((await page.getByTestId('confirm-patch').textContent())!)).toEqual({ mode: 'paused', message: 'Restocking: back in five minutes' });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-confirm.png') });
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await queue.controls()).toMatchObject({ mode: 'paused', message: 'Restocking: back in five minutes' });
    await expect.poll(() => page.getByTestId('mode').textContent()).toBe('Paused');
    expect(await page.getByTestId('toast').textContent()).toMatch(/Applied to “sneaker-drop”/);
    // The audit trail on the page: who (what authorize returned), the version and the patch.
    await expect
      .poll(() => page.getByTestId('controls-log').locator('li').first().textContent())
      .toMatch(/ · v\d+ · ops@example · \{"mode":"paused","message":"Restocking/);

    // Cancel changes nothing.
    const version = (await queue.controls()).version;
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await queue.controls()).version).toBe(version);
    expect(problems).toEqual([]);
  });

  it('sets the stock and the safety net through their form, and refuses a bad stock without sending it', async () => {
    const before = await queue.controls();
    await page.locator('#in-stock').fill('-3');
    await page.getByRole('button', { name: 'Review change…' }).last().click();
    await expect.poll(() => page.locator('#form-error').textContent()).toMatch(/stock must be a whole number/);
    expect((await queue.controls()).version).toBe(before.version);

    await page.locator('#in-stock').fill('120');
    await page.locator('#in-safety-net').setChecked(!before.safetyNet);
    await page.getByRole('button', { name: 'Review change…' }).last().click();
    const dialog = page.getByTestId('confirm-dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(JSON.parse((await page.getByTestId('confirm-patch').textContent())!)).toEqual({ stock: 120, safetyNet: !before.safetyNet });
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    // The change as applied (the shop's crowd keeps buying, so the stock left moves on from 120).
    const [change] = await queue.controlsLog({ limit: 1 });
    expect(change).toMatchObject({ actor: 'ops@example', patch: { stock: 120, safetyNet: !before.safetyNet } });
    expect(await queue.controls()).toMatchObject({ safetyNet: !before.safetyNet });
    expect((await queue.controls()).stock).toBeLessThanOrEqual(120);
    await expect.poll(() => page.locator('#c-stock').textContent()).toMatch(/^\d+ left$/);
    expect(problems).toEqual([]);
  });
});

describe('the example shop', () => {
  it('serves the dashboard at /ops/waitgate/ behind HTTP Basic auth (user ops)', async () => {
    // The shop imports the built package (dist/), like a user's app.
    const { createShop } = await import('../../examples/express-shop/app.mjs');
    const { openDatabase } = await import('../../examples/express-shop/db.mjs');
    const { MemoryStore: BuiltStore, WaitingQueue: BuiltQueue } = await import('waitgate');
    const shopQueue = new BuiltQueue({ store: new BuiltStore(), name: 'sneaker-drop' });
    const shop = `${await listen(createServer(createShop({ queue: shopQueue, db: openDatabase(':memory:'), opsPassword: 'e2e-password' })))}/ops/waitgate/`;

    const anonymous = await browser.newContext();
    const wrong = await browser.newContext({ httpCredentials: { username: 'ops', password: 'nope' } });
    const ops = await browser.newContext({ httpCredentials: { username: 'ops', password: 'e2e-password' } });
    try {
      const challenged = await anonymous.request.get(shop);
      expect(challenged.status()).toBe(401);
      expect(challenged.headers()['www-authenticate']).toMatch(/^Basic /);
      expect((await wrong.request.get(shop)).status()).toBe(401);
      const opsPage = await ops.newPage();
      expect((await opsPage.goto(shop))!.status()).toBe(200);
      await expect.poll(() => opsPage.getByTestId('status').getAttribute('data-state')).toBe('live');
      expect(await opsPage.title()).toBe('Sneaker drop · waitgate');
    } finally {
      await Promise.all([anonymous.close(), wrong.close(), ops.close()]);
    }
  });
});
