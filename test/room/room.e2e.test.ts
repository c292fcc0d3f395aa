// The waiting page in Chromium (SPEC §16), under `Content-Security-Policy: default-src 'self'`:
// waiting, paused, countdown (with the draw's commitment), closed and ready, with JavaScript on
// and off, in English, Japanese and Arabic (right to left); axe-core finds nothing in any of them
// (with JavaScript off the one finding allowed is axe's `meta-refresh`: the refresh is inside
// <noscript>, for exactly those browsers). Then what the script does: it enters (solving a
// proof-of-work gate), follows the event stream when one opens, polls when there is none, and on
// READY takes the member on with the pass cookie. Screenshots go to docs/images/room-*.png with
// UPDATE_DOCS_IMAGES=1 (and to .artifacts/ always).

import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { join } from 'node:path';
import express from 'express';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { queueRoutes, requireEntryToken } from '../../src/http/express.js';
import { powGate } from '../../src/gate/index.js';
import { launchChromium } from '../support/chromium.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, '.artifacts');
const CSP = "default-src 'self'";

let browser: Browser;
let server: Server;
let base: string;
const queues = new Map<string, WaitingQueue>();
const cspViolations: string[] = [];
const flaky = { refuse: true, attempts: 0 };

/** A queue of its own under /q/<name>/, with the page (no redirect: the ready state is shown) and an order route. */
function mount(
  app: express.Express,
  name: string,
  pollSeconds: number,
  extra: Partial<Parameters<typeof queueRoutes>[1]> = {},
  lanes: Array<{ name: string; share: number }> = [],
): void {
  const queue = new WaitingQueue({
    store: new MemoryStore(),
    name,
    admitRatePerSecond: 50,
    admitBurst: 1,
    pollingIntervals: [{ seconds: pollSeconds }],
    lanes,
  });
  queues.set(name, queue);
  const memberId = (req: express.Request) => /(?:^|; )member=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
  app.use(`/q/${name}`, queueRoutes(queue, { memberId, page: { continueUrl: `/q/${name}/next`, cookiePath: `/q/${name}`, redirect: false }, ...extra }));
  app.post(`/q/${name}/order`, requireEntryToken(queue, { memberId }), (_req, res) => void res.status(201).json({ ok: true }));
}

beforeAll(async () => {
  browser = await launchChromium();
  const app = express();
  app.use((_req, res, next) => void (res.set('content-security-policy', CSP), next()));
  // The states hold still (a slow refresh without JavaScript, so axe reads a page that stays); the rest moves.
  for (const name of ['waiting', 'paused', 'countdown', 'closed', 'ready']) mount(app, name, 60);
  mount(app, 'live', 0.5, { maxStreams: 0 }); // every stream refused (503): the page polls
  mount(app, 'stream', 60); // a minute between polls: a change within seconds came by the stream
  // Its streams refused while `flaky.refuse` holds (as a full or restarting instance refuses them).
  app.get('/q/flaky/events', (_req, res, next) => {
    flaky.attempts++;
    if (!flaky.refuse) return next();
    res
      .status(503)
      .set('retry-after', '1')
      .json({ error: { code: 'TOO_MANY_STREAMS', message: 'full' } });
  });
  mount(app, 'flaky', 60);
  mount(app, 'gated', 0.5, { gate: powGate({ hmacKey: 'e2e-room-hmac-key-0123456789', difficulty: 2000 }) });
  mount(app, 'invited', 0.5, {}, [{ name: 'vip', share: 0.5 }]);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await browser?.close();
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function visit(queue: string, member: string, options: { lang: string; js: boolean; code?: string }): Promise<{ page: Page; context: BrowserContext }> {
  const context = await browser.newContext({ javaScriptEnabled: options.js, viewport: { width: 720, height: 760 }, locale: options.lang });
  await context.addCookies([{ name: 'member', value: member, url: base }]);
  const page = await context.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(`${base}/q/${queue}/room?lang=${options.lang}${options.code ? `&code=${options.code}` : ''}`);
  return { page, context };
}

/**
 * axe-core's violations (rule ids). Chromium fires no timer in a page with JavaScript off, which
 * axe needs, so a JavaScript-off page is audited as its DOM: the same markup with <noscript>
 * unwrapped (as such a browser parses it) and no script, served at its own URL in a second tab.
 * There axe's `meta-refresh` is expected: the refresh is for exactly those browsers.
 */
async function axeViolations(page: Page, js: boolean): Promise<string[]> {
  let target = page;
  if (!js) {
    const html = (await page.content()).replace(/<\/?noscript>/g, '').replace(/<script[^>]*><\/script>/g, '');
    const context = await browser.newContext({ viewport: { width: 720, height: 760 } });
    target = await context.newPage();
    await target.route(page.url(), (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }));
    await target.goto(page.url());
  }
  await target.evaluate(AXE);
  const result = await target.evaluate(
    async () => (await (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string }> }> } }).axe.run()).violations,
  );
  if (target !== page) await target.context().close();
  return result.map((v) => v.id).filter((id) => js || id !== 'meta-refresh');
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
  if (process.env.UPDATE_DOCS_IMAGES === '1') copyFileSync(join(ARTIFACTS, name), join(ROOT, 'docs', 'images', name));
}

const visible = (page: Page, selector: string) => page.locator(selector).isVisible();
const slot = (page: Page, name: string) => page.locator(`[data-slot="${name}"]`).innerText();

describe('the waiting page in Chromium', () => {
  it('shows each state, JavaScript on and off, in three locales, with no axe violation', async () => {
    const ahead = ['a1', 'a2', 'a3'];
    for (const name of ['waiting', 'paused', 'closed', 'ready']) for (const id of ahead) await queues.get(name)!.enter(id);
    await queues.get('paused')!.setControls({ mode: 'paused', message: 'Restocking: back in ten minutes.' });
    // Closed keeps who waits (a newcomer is refused: the `refused` state), so they join first.
    for (const lang of ['en', 'ja', 'ar']) for (const js of ['js', 'nojs']) await queues.get('closed')!.enter(`closed-${lang}-${js}`);
    await queues.get('closed')!.setControls({ mode: 'closed', message: 'Sold out, thank you!' });
    await queues.get('countdown')!.setControls({ opensAt: Date.now() + 3_600_000, shuffle: true });
    const commitment = (await queues.get('countdown')!.controls()).drawCommitment!;

    const states = ['waiting', 'paused', 'countdown', 'closed', 'ready'] as const;
    const check = async (lang: string, js: boolean, state: (typeof states)[number]) => {
      const member = `${state}-${lang}-${js ? 'js' : 'nojs'}`;
      const queue = queues.get(state)!;
      if ((!js || state === 'ready') && state !== 'closed') await queue.enter(member); // without JavaScript the page does not enter by itself
      if (state === 'ready') {
        while ((await queue.state(member)) !== 'READY') {
          await queue.admit();
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      const { page, context } = await visit(state, member, { lang, js });
      const label = `${state}, ${lang}, JavaScript ${js ? 'on' : 'off'}`;
      expect(await page.locator('html').getAttribute('dir'), label).toBe(lang === 'ar' ? 'rtl' : 'ltr');
      expect(await page.locator('html').getAttribute('lang'), label).toBe(lang);
      await expect.poll(() => page.locator('main').getAttribute('data-state'), { message: label }).toBe(state);
      if (state === 'waiting' || state === 'paused' || state === 'closed') {
        await expect.poll(() => slot(page, 'ahead'), { message: label }).toMatch(/^[0-9٠-٩]+$/); // three or more: earlier visitors wait too
      }
      if (state === 'paused') expect(await slot(page, 'notice-message')).toBe('Restocking: back in ten minutes.');
      if (state === 'closed') expect(await slot(page, 'notice-message')).toBe('Sold out, thank you!');
      if (state === 'countdown') {
        expect(await page.locator('[role="timer"]').innerText()).toMatch(/^[0-9٠-٩]+(:[0-9٠-٩]{2}){1,2}$/);
        expect(await page.locator('[data-commitment] code').innerText()).toBe(commitment);
      }
      if (state === 'ready') {
        expect(await page.getByRole('link').getAttribute('href')).toBe('/q/ready/next');
        const pass = (await context.cookies()).find((c) => c.name === 'waitgate_pass')!;
        expect(pass).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/q/ready', secure: false });
      }
      expect(await page.locator('main').innerText(), label).not.toMatch(/\bnull\b|\bNaN\b|\bundefined\b|\{\w+\}/);
      expect(await axeViolations(page, js), label).toEqual([]);
      if (lang === 'en' && js) await screenshot(page, `room-${state}.png`);
      if (lang === 'ar' && js && state === 'waiting') await screenshot(page, 'room-rtl.png');
      await context.close();
    };
    // Three pages at a time: a page mostly waits (its load, axe's timers), so the 30 go faster side by side.
    const combos = ['en', 'ja', 'ar'].flatMap((lang) => [true, false].flatMap((js) => states.map((state) => () => check(lang, js, state))));
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        for (let next = combos.shift(); next; next = combos.shift()) await next();
      }),
    );
    expect(cspViolations).toEqual([]);
  }, 300_000); // 30 pages and their audits: a hang bound for a loaded CI machine

  it('with JavaScript: enters, polls without an event stream, announces a change of state, and takes the member on when READY', async () => {
    const queue = queues.get('live')!;
    await queue.enter('x1');
    const { page, context } = await visit('live', 'dana', { lang: 'en', js: true });
    await expect.poll(() => slot(page, 'place-line')).toBe('You are number 2 in line');
    expect(await queue.state('dana')).toBe('WAITING'); // the script entered through POST <prefix>/enter
    await queue.setControls({ mode: 'paused', message: 'Back soon' });
    await expect.poll(() => visible(page, '.waitgate-notice')).toBe(true); // polled: the event stream was refused
    await expect.poll(() => page.locator('#waitgate-announce').innerText()).toBe('The sale is paused. Back soon');
    await queue.setControls({ mode: 'open', message: null });
    await queue.admit();
    await queue.leave('x1');
    while ((await queue.state('dana')) !== 'READY') {
      await queue.admit();
      await new Promise((r) => setTimeout(r, 25));
    }
    await expect.poll(() => page.locator('main').getAttribute('data-state')).toBe('ready');
    expect((await context.cookies()).some((c) => c.name === 'waitgate_pass' && c.httpOnly)).toBe(true);
    // The cookie goes with the order request, no header needed.
    const status = await page.evaluate(async () => (await fetch('order', { method: 'POST' })).status);
    expect(status).toBe(201);
    await context.close();
  });

  it('follows the event stream while it is open', async () => {
    const queue = queues.get('stream')!;
    for (let i = 0; i < 41; i++) await queue.enter(`ahead-${i}`);
    const { page, context } = await visit('stream', 'erin', { lang: 'en', js: true });
    await expect.poll(() => slot(page, 'place-line')).toBe('You are number 42 in line');
    // Polls are a minute apart here: the new place within the poll's bound comes by the stream.
    await queue.leave('ahead-0');
    await queue.leave('ahead-1');
    await queue.admit();
    await expect.poll(() => slot(page, 'place-line'), { timeout: 20_000 }).toBe('You are number 39 in line');
    await context.close();
  });

  it('opens the event stream again after a failure, with a backoff, polling meanwhile', async () => {
    const queue = queues.get('flaky')!;
    for (let i = 0; i < 5; i++) await queue.enter(`ahead-${i}`);
    const { page, context } = await visit('flaky', 'gus', { lang: 'en', js: true });
    await expect.poll(() => slot(page, 'place-line')).toBe('You are number 6 in line');
    await expect.poll(() => flaky.attempts, { timeout: 20_000 }).toBeGreaterThanOrEqual(2); // refused, then tried again
    flaky.refuse = false;
    const refused = flaky.attempts;
    await expect.poll(() => flaky.attempts, { timeout: 30_000 }).toBeGreaterThan(refused); // the next attempt opens it
    // Polls are a minute apart here: the new place within the bound comes by the reopened stream.
    await queue.leave('ahead-0');
    await queue.admit();
    await expect.poll(() => slot(page, 'place-line'), { timeout: 20_000 }).toBe('You are number 4 in line');
    await context.close();
  });

  it("enters with the invite code of its address (?code=): first in the code's lane; a spent code is refused", async () => {
    const queue = queues.get('invited')!;
    await queue.addCodes('vip', ['VIP-E2E']);
    for (let i = 0; i < 3; i++) await queue.enter(`plain-${i}`);
    const { page, context } = await visit('invited', 'gus', { lang: 'en', js: true, code: 'VIP-E2E' });
    await expect.poll(() => slot(page, 'place-line')).toBe('You are number 1 in line');
    expect((await queue.stats()).lanes![1]).toMatchObject({ name: 'vip', waiting: 1, codeUsesLeft: 0 });
    await context.close();
    const late = await visit('invited', 'hal', { lang: 'en', js: true, code: 'VIP-E2E' });
    await expect.poll(() => late.page.locator('main').getAttribute('data-state')).toBe('refused');
    expect(await queue.state('hal')).toBe('NOT_ENTERED');
    await late.context.close();
  });

  it("enters with the invite code of its address (?code=) with JavaScript off: the join form carries it, first in the code's lane", async () => {
    const queue = queues.get('invited')!;
    await queue.addCodes('vip', ['VIP-NOJS']);
    await queue.leave('gus'); // the JavaScript test's member of the lane, if it ran
    for (let i = 0; i < 3; i++) await queue.enter(`plain-${i}`);
    const { page, context } = await visit('invited', 'ida', { lang: 'en', js: false, code: 'VIP-NOJS' });
    expect(await page.locator('main').getAttribute('data-state')).toBe('not-entered');
    await Promise.all([page.waitForURL(/\/room\?lang=en$/), page.locator('.waitgate-join button').click()]);
    expect(await slot(page, 'place-line')).toBe('You are number 1 in line');
    expect((await queue.stats()).lanes![1]).toMatchObject({ name: 'vip', waiting: 1, codeUsesLeft: 0 });
    await context.close();
  });

  it('solves the gate’s proof-of-work challenge before entering', async () => {
    const { page, context } = await visit('gated', 'fay', { lang: 'en', js: true });
    await expect.poll(() => slot(page, 'place-line'), { timeout: 30_000 }).toBe('You are number 1 in line');
    expect(await queues.get('gated')!.state('fay')).toBe('WAITING');
    await context.close();
  });
});
