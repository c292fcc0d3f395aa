// The waiting page's pieces without a server: every locale complete, the negotiation, the pass
// cookie's attributes, the page options, and what a position reads as.

import { describe, expect, it } from 'vitest';
import { WaitgateConfigError } from '../../src/index.js';
import { isLocalHost, passCookie, requestToken } from '../../src/http/pass-cookie.js';
import { parsePage } from '../../src/room/options.js';
import { EN, LOCALES, isRtl, negotiateLocale, textsFor } from '../../src/room/texts.js';
import { formatCountdown, formatDuration, viewOf } from '../../src/room/view.js';
import { waitingPosition } from '../support/positions.js';

const waiting = waitingPosition({ rank: 1233, currentTotalWaitingCount: 5000, estimatedWaitSeconds: 4000, pollingIntervalSeconds: 5 });

describe('locales', () => {
  it('has at least 15, each with every key and the placeholders English has', () => {
    const codes = Object.keys(LOCALES);
    expect(codes.length).toBeGreaterThanOrEqual(15);
    expect(codes).toEqual(expect.arrayContaining(['ko', 'ja', 'zh', 'es', 'pt', 'fr', 'de', 'ar']));
    for (const [code, texts] of Object.entries(LOCALES)) {
      expect(Object.keys(texts).sort(), code).toEqual(Object.keys(EN).sort());
      for (const [key, english] of Object.entries(EN)) {
        const placeholders = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
        expect(placeholders(texts[key as keyof typeof EN]), `${code}.${key}`).toEqual(placeholders(english));
      }
    }
    expect(isRtl('ar')).toBe(true);
    expect(isRtl('ar-EG')).toBe(true);
    expect(isRtl('ja')).toBe(false);
  });

  it('negotiates ?lang= first, then Accept-Language by q with regions falling back, then the default', () => {
    const all = Object.keys(LOCALES);
    expect(negotiateLocale('de', 'fr', all, 'en')).toBe('de');
    expect(negotiateLocale('xx', 'fr;q=0.5, pt-BR;q=0.9', all, 'en')).toBe('pt');
    expect(negotiateLocale(null, 'en;q=0.1, zh-CN', all, 'en')).toBe('zh');
    expect(negotiateLocale(null, 'sw, *;q=0.5', all, 'es')).toBe('es');
    expect(negotiateLocale(null, 'ko;q=0', all, 'en')).toBe('en');
    expect(negotiateLocale(null, undefined, all, 'en')).toBe('en');
    expect(negotiateLocale(null, 'pt-BR', [...all, 'pt-BR'], 'en')).toBe('pt-BR');
  });

  it('takes overrides over the built-in texts, and English for the gaps of a new locale', () => {
    expect(textsFor('fr', { fr: { heading: 'Dans la file du drop' } })).toMatchObject({ heading: 'Dans la file du drop', join: 'Rejoindre la file' });
    expect(textsFor('sw', { sw: { heading: 'Uko kwenye foleni' } })).toMatchObject({ heading: 'Uko kwenye foleni', join: 'Join the queue' });
  });

  it('formats numbers, durations and countdowns with Intl for the locale', () => {
    expect(formatDuration(45, 'en')).toBe('45 seconds');
    expect(formatDuration(600, 'de')).toBe('10 Minuten');
    expect(formatDuration(4000, 'en')).toBe('67 minutes');
    expect(formatDuration(6000, 'en')).toBe('1 hour, 40 minutes');
    expect(formatCountdown(3725, 'en')).toBe('1:02:05');
    expect(formatCountdown(65, 'en')).toBe('1:05');
    const view = viewOf(waiting, textsFor('en', {}), 'en', 0);
    expect(view.slots).toMatchObject({ 'place-line': 'You are number 1,234 in line', ahead: '1,233', total: '5,000', wait: 'about 67 minutes' });
    expect(view.progress).toBe(75);
    expect(viewOf(waiting, textsFor('de', {}), 'de', 0).slots.total).toBe('5.000');
    expect(viewOf({ ...waiting, queueMode: 'paused', message: 'Back soon' }, EN, 'en', 0)).toMatchObject({
      state: 'paused',
      slots: { 'notice-title': 'The sale is paused', 'notice-message': 'Back soon', announce: 'The sale is paused. Back soon' },
    });
  });
});

describe('the pass cookie', () => {
  it('is HttpOnly, SameSite=Lax, on the path, until the token expires, and Secure unless the host is local', () => {
    const now = 1_000_000;
    expect(passCookie('tok', { path: '/checkout', host: 'shop.example', expiresAt: now + 90_500, now })).toBe(
      'waitgate_pass=tok; Path=/checkout; Max-Age=91; HttpOnly; SameSite=Lax; Secure',
    );
    for (const host of ['localhost:3000', '127.0.0.1', '[::1]:8080', 'shop.localhost']) expect(isLocalHost(host), host).toBe(true);
    for (const host of ['shop.example', 'localhost.example', '10.0.0.1', undefined]) expect(isLocalHost(host), String(host)).toBe(false);
  });

  it('is Secure behind a TLS proxy that forwards to a local host (nginx proxy_pass http://127.0.0.1:3000)', () => {
    const now = 1_000_000;
    const behindProxy = (forwardedProto: string | undefined) =>
      passCookie('tok', { path: '/', host: '127.0.0.1:3000', forwardedProto, expiresAt: now + 60_000, now });
    expect(behindProxy('https')).toMatch(/; Secure$/);
    expect(behindProxy('https,http')).toMatch(/; Secure$/); // the first hop is the client's
    expect(behindProxy('HTTPS')).toMatch(/; Secure$/);
    expect(behindProxy('http')).not.toContain('Secure');
    expect(behindProxy(undefined)).not.toContain('Secure');
  });

  it('is read when the request has no token header; the header wins when both are there', () => {
    expect(requestToken({ headers: { cookie: 'a=1; waitgate_pass=abc' } }, 'x-entry-token')).toBe('abc');
    expect(requestToken({ headers: { cookie: 'waitgate_pass=abc', 'x-entry-token': 'hdr' } }, 'x-entry-token')).toBe('hdr');
    expect(requestToken(new Request('http://x/', { headers: { cookie: 'waitgate_pass=web' } }), 'x-entry-token')).toBe('web');
    expect(requestToken({ headers: { cookie: 'waitgate_pass=' } }, 'x-entry-token')).toBeUndefined();
    expect(requestToken({ headers: {} }, 'x-entry-token')).toBeUndefined();
  });
});

describe('page options', () => {
  it('has defaults, and false for none', () => {
    expect(parsePage(undefined)).toMatchObject({ continueUrl: '/', cookiePath: '/', redirect: true, theme: {}, defaultLocale: 'en' });
    expect(parsePage(false)).toBeNull();
  });

  it.each([
    [{ continueUrl: 'javascript:alert(1)' }, 'page.continueUrl'],
    [{ continueUrl: '//evil.example/' }, 'page.continueUrl'],
    [{ cookiePath: 'checkout' }, 'page.cookiePath'],
    [{ theme: { color: 'red' } }, 'page.theme.color'],
    [{ theme: { '--waitgate-bg': 'red; } body { display: none' } }, 'page.theme.--waitgate-bg'],
    [{ template: '<html>{{room}}</html>' }, 'page.template'],
    [{ timeZone: 'Mars/Olympus' }, 'page.timeZone'],
    [{ colour: 'red' }, 'page.colour'],
    // Tags of the right shape that Intl refuses: every page in them would fail to render (a 500).
    [{ texts: { 'en-12': { heading: 'Queue' } } }, 'page.texts.en-12'],
    [{ texts: { 'de-aa-bb': { heading: 'Warteschlange' } } }, 'page.texts.de-aa-bb'],
  ])('refuses %j naming the option', (page, option) => {
    let error: unknown;
    try {
      parsePage(page as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WaitgateConfigError);
    expect((error as WaitgateConfigError).option).toBe(option);
  });
});
