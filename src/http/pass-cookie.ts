// The cookie `waitgate_pass` (SPEC §16): the waiting page sets it when the member is READY, so the
// entry token (or signed pass) travels in no URL; every guard accepts it besides the header.

import { cookieValue, entryTokenOf, requestHeader } from './request-header.js';

/** The cookie carrying the entry token or signed pass. */
export const PASS_COOKIE = 'waitgate_pass';

/**
 * The token a guarded request carries: the header when it is there (a repeated one is INVALID,
 * as before), else the `waitgate_pass` cookie. `req` is any request an adapter has (requestHeader).
 */
export function requestToken(req: unknown, tokenHeader: string): string | undefined {
  const header = requestHeader(req, tokenHeader);
  if (header !== undefined) return entryTokenOf(header);
  const cookie = cookieValue(requestHeader(req, 'cookie'), PASS_COOKIE);
  return cookie === undefined || cookie === '' ? undefined : cookie;
}

/** Whether a Host header names this machine (no `Secure` then: plain http://localhost works in development). */
export function isLocalHost(host: string | undefined): boolean {
  const name = (host ?? '')
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * The Set-Cookie value of a pass: HttpOnly, SameSite=Lax, Path `path`, living until the token
 * expires, and Secure unless the request's host is local and it did not come through a TLS proxy:
 * behind nginx's default `proxy_pass http://127.0.0.1:3000` the Host is local, but the proxy's
 * `X-Forwarded-Proto: https` (its first value: the client's hop) says the browser used HTTPS.
 */
export function passCookie(
  token: string,
  options: { path: string; host: string | undefined; forwardedProto?: string | undefined; expiresAt: number; now?: number },
): string {
  const maxAge = Math.max(1, Math.ceil((options.expiresAt - (options.now ?? Date.now())) / 1000));
  const overTls = /^\s*https\s*(,|$)/i.test(options.forwardedProto ?? '');
  const secure = isLocalHost(options.host) && !overTls ? '' : '; Secure';
  return `${PASS_COOKIE}=${token}; Path=${options.path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}
