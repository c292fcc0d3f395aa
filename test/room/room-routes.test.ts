// The waiting page on every adapter (SPEC §16): served at <prefix>/room with its CSS and script,
// gone with `page: false`; the no-JS join form; on READY the `waitgate_pass` cookie with its
// attributes and a 303 to page.continueUrl, the cookie then accepted by the token guard and the
// pass guard instead of the header; the locale from ?lang= and Accept-Language.

import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { signingWith } from '../support/signing-keys.js';
import { WaitgateModule } from '../../src/http/nestjs.js';
import { listen } from '../http/nestjs-app.js';
import { PASS_APPS, type PassApp } from '../http/pass-apps.js';

let app: PassApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const newQueue = () => new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith() });

describe.each(Object.keys(PASS_APPS))('the waiting page on %s', (name) => {
  const call = (method: string, path: string, headers: Record<string, string> = {}) => fetch(app!.url + path, { method, headers, redirect: 'manual' });

  it('serves the page, its CSS and its script; the form joins; READY sets the pass cookie that every guard accepts', async () => {
    const queue = newQueue();
    app = await PASS_APPS[name]!(queue, {}, { continueUrl: '/checkout?step=1', cookiePath: '/' });
    const alice = { 'x-member': 'alice', 'accept-language': 'fr-CH, de;q=0.8' };

    const first = await call('GET', '/queue/room', alice);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const notEntered = await first.text();
    expect(notEntered).toMatch(/<html lang="fr" dir="ltr">/);
    expect(notEntered).toContain('Rejoindre la file'); // the join form, for browsers without JavaScript
    expect(notEntered).not.toMatch(/<script>|<style|\sstyle=/); // nothing inline (CSP default-src 'self')
    expect(await queue.state('alice')).toBe('NOT_ENTERED'); // a page view never enters

    const joined = await call('POST', '/queue/room', { ...alice, 'content-type': 'text/plain' });
    expect(joined.status).toBe(303);
    expect(joined.headers.get('location')).toBe('room');
    expect(await queue.state('alice')).toBe('WAITING');
    const waiting = await (await call('GET', '/queue/room', alice)).text();
    expect(waiting).toContain('Vous êtes numéro 1 dans la file');
    expect(waiting).toMatch(/<noscript><meta http-equiv="refresh" content="\d+"><\/noscript>/);
    expect(waiting).toMatch(/<progress class="waitgate-progress" max="100" value="100"/);

    const css = await call('GET', '/queue/room.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('--waitgate-accent');
    const js = await call('GET', '/queue/room.js');
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await js.text()).toContain('EventSource');

    await queue.admit();
    const ready = await call('GET', '/queue/room', alice);
    expect(ready.status).toBe(303);
    expect(ready.headers.get('location')).toBe('/checkout?step=1');
    const cookie = ready.headers.get('set-cookie')!;
    const [pair, ...attributes] = cookie.split('; ');
    expect(pair).toMatch(/^waitgate_pass=[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Lax', expect.stringMatching(/^Max-Age=\d+$/)]));
    expect(attributes).not.toContain('Secure'); // 127.0.0.1: development over plain http
    expect(cookie).not.toContain(' ?'); // nothing of the pass in the URL either
    expect(ready.headers.get('location')).not.toContain(pair!.split('=')[1]!);

    // The cookie alone, without the header: the pass guard admits, the token guard claims and consumes.
    const withCookie = { 'x-member': 'alice', cookie: `theme=dark; ${pair}` };
    const checkout = await call('GET', '/checkout', withCookie);
    expect(checkout.status).toBe(200);
    expect(await checkout.json()).toMatchObject({ memberId: 'alice' });
    expect((await call('POST', '/orders', withCookie)).status).toBe(201);
    expect((await call('POST', '/orders', withCookie)).status).toBe(401); // used once
    expect((await call('POST', '/orders', { 'x-member': 'alice' })).status).toBe(401); // neither header nor cookie
    // The header wins over the cookie when both are there.
    expect((await call('GET', '/checkout', { ...withCookie, 'x-entry-token': 'forged' })).status).toBe(401);
  });

  it('negotiates the locale: ?lang= over Accept-Language, Arabic right to left, English by default', async () => {
    const queue = newQueue();
    app = await PASS_APPS[name]!(queue);
    await queue.enter('bob');
    const page = async (path: string, headers: Record<string, string> = {}) => (await call('GET', path, { 'x-member': 'bob', ...headers })).text();
    expect(await page('/queue/room', { 'accept-language': 'ko-KR,ko;q=0.9,en;q=0.5' })).toMatch(/<html lang="ko" dir="ltr">[\s\S]*대기 순번 1번입니다/);
    expect(await page('/queue/room?lang=ar', { 'accept-language': 'ja' })).toMatch(
      /<html lang="ar" dir="rtl">[\s\S]*ترتيبك ١ في الطابور|<html lang="ar" dir="rtl">[\s\S]*ترتيبك 1 في الطابور/,
    );
    expect(await page('/queue/room?lang=xx', { 'accept-language': 'ja' })).toMatch(/<html lang="ja"/);
    expect(await page('/queue/room')).toMatch(/<html lang="en" dir="ltr">[\s\S]*You are number 1 in line/);
    expect(await page('/queue/room?lang=pt')).toContain('action="room?lang=pt"'); // the choice stays in the form
  });

  it('page: false serves no page, CSS nor script; the JSON routes stay', async () => {
    const queue = newQueue();
    app = await PASS_APPS[name]!(queue, {}, false);
    for (const path of ['/queue/room', '/queue/room.css', '/queue/room.js']) expect((await call('GET', path, { 'x-member': 'carol' })).status).toBe(404);
    expect((await call('POST', '/queue/room', { 'x-member': 'carol' })).status).toBe(404);
    expect((await call('POST', '/queue/enter', { 'x-member': 'carol' })).status).toBe(200);
  });

  it('redirects <prefix>/room/ to <prefix>/room (308, query kept): the page\'s relative URLs name the queue routes', async () => {
    const queue = newQueue();
    app = await PASS_APPS[name]!(queue);
    for (const [path, location] of [
      ['/queue/room/', '../room'],
      ['/queue/room/?lang=ja', '../room?lang=ja'],
    ]) {
      const slash = await call('GET', path!, { 'x-member': 'erin' });
      expect(slash.status).toBe(308);
      expect(slash.headers.get('location')).toBe(location);
      expect(new URL(location!, app.url + path).pathname).toBe('/queue/room');
    }
    expect((await call('GET', '/queue/room', { 'x-member': 'erin' })).status).toBe(200);
  });

  it('answers 401 as a page without a member, and shows a closed queue to a newcomer', async () => {
    const queue = newQueue();
    app = await PASS_APPS[name]!(queue);
    expect((await call('GET', '/queue/room')).status).toBe(401);
    await queue.setControls({ mode: 'closed', message: 'Sold out, thank you!' });
    const refused = await call('POST', '/queue/room', { 'x-member': 'dave', 'content-type': 'text/plain' });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/This queue is closed[\s\S]*Sold out, thank you!/);
  });
});

describe('the waiting page on NestJS with Fastify', () => {
  it('serves the page, its assets and the join form; page: false removes them', async () => {
    const queue = newQueue();
    const memberId = (request: FastifyRequest) => request.headers['x-member'] as string | undefined;
    const on = await listen(new FastifyAdapter(), [WaitgateModule.forRoot({ queue, memberId, page: { continueUrl: '/next' } })], []);
    try {
      const call = (method: string, path: string) =>
        fetch(on.url + path, { method, headers: { 'x-member': 'alice', 'content-type': 'text/plain' }, redirect: 'manual' });
      expect((await call('GET', '/queue/room')).headers.get('content-type')).toMatch(/^text\/html/);
      expect((await call('POST', '/queue/room')).status).toBe(303);
      expect(await (await call('GET', '/queue/room')).text()).toContain('You are number 1 in line');
      expect((await call('GET', '/queue/room.css')).headers.get('content-type')).toMatch(/^text\/css/);
      // Fastify under Nest matches no trailing slash: no page answers there whose relative URLs would go astray.
      expect((await call('GET', '/queue/room/')).status).toBe(404);
      await queue.admit();
      const ready = await call('GET', '/queue/room');
      expect(ready.status).toBe(303);
      expect(ready.headers.get('set-cookie')).toMatch(/^waitgate_pass=.+; HttpOnly; SameSite=Lax$/);
    } finally {
      await on.close();
    }
    const off = await listen(new FastifyAdapter(), [WaitgateModule.forRoot({ queue: newQueue(), memberId, page: false })], []);
    try {
      expect((await fetch(`${off.url}/queue/room`, { headers: { 'x-member': 'alice' } })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('the waiting page and one place per identity (NestJS with Fastify)', () => {
  it('a second member id of an identity joining from the page sees that its place is held elsewhere, and nothing is written', async () => {
    const queue = newQueue();
    const memberId = (request: FastifyRequest) => request.headers['x-member'] as string | undefined;
    const identity = (request: FastifyRequest) => request.headers['x-identity'] as string | undefined;
    const on = await listen(new FastifyAdapter(), [WaitgateModule.forRoot({ queue, memberId, identity, page: { continueUrl: '/next' } })], []);
    try {
      const join = (member: string, lang = 'en') =>
        fetch(`${on.url}/queue/room?lang=${lang}`, {
          method: 'POST',
          headers: { 'x-member': member, 'x-identity': 'alice@example.com', 'content-type': 'text/plain' },
          redirect: 'manual',
        });
      expect((await join('alice-laptop')).status).toBe(303);
      const refused = await join('alice-phone');
      expect(refused.status).toBe(409);
      const page = await refused.text();
      expect(page).toMatch(/<section class="waitgate-refused" data-when="held-elsewhere">\s*<h2>You already have a place in line<\/h2>/);
      expect(await (await join('alice-tablet', 'de')).text()).toContain('Sie haben bereits einen Platz in der Warteschlange');
      expect(await queue.state('alice-phone')).toBe('NOT_ENTERED');
      expect((await queue.stats()).totals.entered).toBe(1);
    } finally {
      await on.close();
    }
  });
});
