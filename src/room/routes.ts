// The waiting page's routes under the queue routes' prefix (SPEC §16), framework-neutral: each
// adapter maps ROOM_ROUTES to `room.run(action, request)` and writes the text answer. The page
// reads the member's place as `GET <prefix>/position` does (through the gate, never entering);
// `POST <prefix>/room` (the page's form, for browsers without JavaScript) enters as
// `POST <prefix>/enter` does, through the gate.

import { runQueueRoute, type HttpResult, type ResolvedRoutesOptions, type RouteRequest } from '../http/core.js';
import { passCookie } from '../http/pass-cookie.js';
import { requestHeader } from '../http/request-header.js';
import type { ErrorBody } from '../http/error-response.js';
import type { Position } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { assets } from './assets.generated.js';
import type { RoomPage } from './options.js';
import { renderRoom, type RoomRender } from './render.js';
import { LOCALES, negotiateLocale, textsFor } from './texts.js';
import { stateOf, type RoomState } from './view.js';

/** The page's routes, relative to the queue routes' prefix. */
export const ROOM_ROUTES = [
  { method: 'GET', path: '/room', action: 'room' },
  { method: 'POST', path: '/room', action: 'join' },
  { method: 'GET', path: '/room.css', action: 'style' },
  { method: 'GET', path: '/room.js', action: 'script' },
  // The page's URLs are relative (`events`, `position`, `room.js`): under `/room/` they would
  // name `/room/events`. Frameworks that match `/room/` as `/room` (Express) get the same answer.
  { method: 'GET', path: '/room/', action: 'slash' },
] as const;

export type RoomAction = (typeof ROOM_ROUTES)[number]['action'];

/** A text answer of the page's routes. */
export interface RoomResult {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request to the page, as an adapter sees it. */
export interface RoomRequest {
  /** Resolves the member (the routes' `memberId(req)`). */
  member: () => unknown;
  /** The request object the gate and the headers are read from. */
  req: unknown;
  /** The request's URL or path with its query (only `?lang=` and `?code=` are read). */
  url: string;
}

/** The page's routes for one queue. */
export interface Room {
  run(action: RoomAction, request: RoomRequest): Promise<RoomResult>;
}

const HTML = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', vary: 'accept-language, cookie' };
const ASSET_CACHE = 'public, max-age=300';
const CONTROLS_TTL_MS = 5000;

/** Creates the page's routes of one queue (`page` checked by parsePage, `gate` and `identity` the routes' own). */
export function createRoom(queue: WaitingQueue, page: RoomPage, { gate, identity }: Omit<RouteRequest, 'req'>): Room {
  const vars = Object.entries(page.theme)
    .map(([name, value]) => `  ${name}: ${value};`)
    .join('\n');
  const style: RoomResult = {
    status: 200,
    headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': ASSET_CACHE },
    body: vars ? `${assets.style}\n:root {\n${vars}\n}\n` : assets.style,
  };
  const script: RoomResult = { status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': ASSET_CACHE }, body: assets.script };
  const available = [...new Set([...Object.keys(LOCALES), ...Object.keys(page.texts)])];
  let controls: { at: number; commitment: string | null } | null = null;

  /** The draw's commitment while a shuffled opening is ahead (one store read every 5 s at most). */
  const commitment = async (): Promise<string | null> => {
    const now = Date.now();
    if (controls && now - controls.at < CONTROLS_TTL_MS) return controls.commitment;
    try {
      const c = await queue.controls();
      controls = { at: now, commitment: c.shuffle && c.opensAt !== null && c.opensAt > now ? c.drawCommitment : null };
    } catch {
      controls = { at: now, commitment: null }; // a store without controls, or down: the page shows no commitment
    }
    return controls.commitment;
  };

  return {
    async run(action, request) {
      if (action === 'style') return style;
      if (action === 'script') return script;
      if (action === 'slash' || (action === 'room' && pathOf(request.url).endsWith('/'))) return toRoomWithoutSlash(request.url);
      const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '');
      const lang = query.get('lang');
      // The invite code of the address (`?code=`, '' is none, as for the page's script): the join form's action carries it.
      const code = query.get('code') || undefined;
      const locale = negotiateLocale(lang, requestHeader(request.req, 'accept-language'), available, page.defaultLocale);
      const base = {
        page,
        locale,
        texts: textsFor(locale, page.texts),
        search: lang && available.includes(locale) && lang === locale ? `?lang=${locale}` : '',
      };
      const joinSearch = code === undefined ? base.search : `${base.search ? `${base.search}&` : '?'}code=${encodeURIComponent(code)}`;
      const html = (status: number, state: RoomState, extra: Partial<RoomRender> = {}, headers: Record<string, string> = {}): RoomResult => ({
        status,
        headers: { ...headers, ...HTML },
        body: renderRoom({ ...base, joinSearch, state, position: null, ...extra }),
      });
      const member = await request.member();
      const result = await runQueueRoute(queue, action === 'join' ? 'enter' : 'position', () => member, {
        gate,
        identity,
        req: request.req,
        code: action === 'join' ? code : undefined,
      });
      if (result.status !== 200) return refusal(result, html);
      if (action === 'join') return { status: 303, headers: { ...result.headers, location: `room${base.search}` }, body: '' };
      const position = result.body as Position;
      const state = stateOf(position);
      if (state === 'ready' && position.entryToken !== null && position.entryTokenExpiresAt !== null) {
        const cookie = passCookie(position.entryToken, {
          path: page.cookiePath,
          host: requestHeader(request.req, 'host'),
          forwardedProto: requestHeader(request.req, 'x-forwarded-proto'),
          expiresAt: position.entryTokenExpiresAt,
        });
        if (page.redirect) return { status: 303, headers: { ...HTML, 'set-cookie': cookie, location: page.continueUrl }, body: '' };
        return html(200, state, { position }, { 'set-cookie': cookie });
      }
      return html(200, state, { position, commitment: position.opensAt === null ? null : await commitment() }, result.headers);
    },
  };
}

/** The path of a URL or of a path with a query. */
function pathOf(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/[?#].*$/s, '');
}

/**
 * `GET <prefix>/room/` → 308 to `<prefix>/room` with the same query, as a relative
 * Location (`../room`), so it stays right behind a proxy that rewrites the prefix.
 */
function toRoomWithoutSlash(url: string): RoomResult {
  const query = /\?[^#]*/.exec(url)?.[0] ?? '';
  return { status: 308, headers: { location: `../room${query}`, 'cache-control': 'no-store' }, body: '' };
}

/** A refused read or enter as a page: a challenge to solve, a closed queue, a place held under another member id, or a problem. */
function refusal(
  result: HttpResult,
  html: (status: number, state: RoomState, extra?: Partial<RoomRender>, headers?: Record<string, string>) => RoomResult,
): RoomResult {
  const error = (result.body as ErrorBody).error;
  if (error.code === 'CHALLENGE_REQUIRED') return html(result.status, 'challenge', {}, result.headers);
  if (error.code === 'QUEUE_CLOSED') return html(result.status, 'refused', { detail: error.message }, result.headers);
  if (error.code === 'IDENTITY_LIMIT') return html(result.status, 'held-elsewhere', {}, result.headers);
  return html(result.status, 'problem', { detail: error.message }, result.headers);
}

/** The page's routes of validated route options, or null with `page: false`. */
export function roomOf(queue: WaitingQueue, options: Pick<ResolvedRoutesOptions<unknown>, 'gate' | 'identity' | 'page'>): Room | null {
  return options.page ? createRoom(queue, options.page, options) : null;
}
