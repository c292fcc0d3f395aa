// Where a request lands under the dashboard's mount, and whether a state change comes from the dashboard's own origin.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** Where a request goes: outside the mount, a redirect to the mount's trailing slash, or a path under the mount. */
export type Location = { kind: 'outside' } | { kind: 'redirect'; location: string } | { kind: 'route'; path: string };

/** Splits a request target into its path and its query (with the `?`, or ''). */
function split(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q) };
}

/** `./waitgate/` for `/ops/waitgate`: a relative Location (it survives a proxy that strips a prefix, and cannot leave the site). */
function toTrailingSlash(path: string, query: string): Location {
  return { kind: 'redirect', location: `./${path.slice(path.lastIndexOf('/') + 1)}/${query}` };
}

/**
 * The path of a request relative to the mount.
 * - `basePath` given (node:http, Koa, Fastify hooks): the request's full path (`originalUrl`
 *   when a framework set one, else `url`) must be `basePath` or start with `basePath/`.
 * - Otherwise a framework that mounts by prefix (Express `app.use(path, …)`) has already
 *   cut `req.url` down and kept the full one in `req.originalUrl`; without either, the
 *   dashboard is at the root.
 * The mount itself without its trailing slash (`/ops/waitgate`) redirects to `waitgate/`, so
 * the page's relative API addresses resolve under the mount.
 */
export function locate(req: IncomingMessage, basePath: string | null): Location {
  const url = req.url ?? '/';
  const original = (req as { originalUrl?: unknown }).originalUrl;
  const full = typeof original === 'string' && original.startsWith('/') ? original : url;
  if (basePath !== null) {
    const { path, query } = split(full);
    if (path === basePath) return toTrailingSlash(path, query);
    if (!path.startsWith(`${basePath}/`)) return { kind: 'outside' };
    return { kind: 'route', path: path.slice(basePath.length) };
  }
  const { path } = split(url);
  if (full !== url && (path === '/' || path === '')) {
    const outer = split(full);
    if (!outer.path.endsWith('/')) return toTrailingSlash(outer.path, outer.query);
  }
  return { kind: 'route', path: path === '' ? '/' : path };
}

/** The first value of a request header, or undefined. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The request's own origin (scheme://host[:port], lower case), as the browser would
 * write it: Express's `req.protocol` and `req.host` when present (they honour its
 * `trust proxy` setting), else TLS on the socket and the Host header.
 */
export function ownOrigin(req: IncomingMessage): string | null {
  const r = req as { protocol?: unknown; host?: unknown; get?: unknown };
  const express = typeof r.get === 'function' && typeof r.protocol === 'string' && typeof r.host === 'string';
  const scheme = express ? (r.protocol as string) : (req.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http';
  const host = express ? (r.host as string) : header(req, 'host');
  if (!host || !/^[A-Za-z0-9.\-[\]:]+$/.test(host)) return null;
  return `${scheme}://${host}`.toLowerCase();
}

/**
 * A state change is accepted only from the dashboard's own origin: `Sec-Fetch-Site`,
 * when the browser sends it, must be `same-origin`; `Origin`, when sent, must be the
 * request's own origin (or one of `origins`, when configured); without `Origin`,
 * `Sec-Fetch-Site: same-origin` is required. Anything else (a request from another
 * site, a client that sends neither header) is refused.
 */
export function isSameOrigin(req: IncomingMessage, origins: readonly string[] | null): boolean {
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = header(req, 'origin');
  if (origin === undefined) return site === 'same-origin';
  const allowed = origins ?? [ownOrigin(req)];
  return allowed.includes(origin.toLowerCase());
}

/** A read of the API from another site (a page embedding it): refused when the browser says so. */
export function isCrossSite(req: IncomingMessage): boolean {
  const site = header(req, 'sec-fetch-site');
  return site === 'cross-site' || site === 'same-site';
}
