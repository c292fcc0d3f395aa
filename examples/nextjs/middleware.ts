// Edge middleware in front of the checkout pages: the signed entry pass (X-Entry-Token) is
// checked here with verifyEntryPass from waitgate/pass: Web Crypto only, no Redis, no store
// call. The order route (app/api/orders) still claims the pass, once.
//
// middleware.ts, not proxy.ts: Next.js 16 renamed middleware to proxy and runs proxy.ts on
// Node.js only (a `runtime` config there fails the build); middleware.ts (deprecated, a warning
// at build) runs on the Edge runtime, its default. On Node.js, proxy.ts with the same body works.

import { verifyEntryPass, type EntryPassKeys } from 'waitgate/pass';

export const config = { matcher: '/api/checkout/:path*' };

/** The queue's public keys from its JWKS route (app/api/queue), kept 5 minutes as the route's Cache-Control says. */
let cached: { set: Promise<EntryPassKeys>; until: number } | undefined;
function queueKeys(origin: string): Promise<EntryPassKeys> {
  if (!cached || cached.until < Date.now()) {
    const set = fetch(`${origin}/api/queue/.well-known/jwks.json`).then(async (response) => {
      if (!response.ok) throw new Error(`JWKS answered ${response.status}`);
      return (await response.json()) as EntryPassKeys;
    });
    cached = { set, until: Date.now() + 300_000 };
    set.catch(() => (cached = undefined)); // fetched anew on the next request
  }
  return cached.set;
}

declare const EdgeRuntime: string | undefined;
/** Where the pass was checked (`edge`: Next.js defines EdgeRuntime there), for your logs. */
const CHECKED_ON = { 'x-entry-checked-on': typeof EdgeRuntime === 'string' ? 'edge' : 'nodejs' };

const refuse = (status: number, code: string, message: string) =>
  Response.json({ error: { code, message } }, { status, headers: { 'cache-control': 'no-store', ...CHECKED_ON } });

/** Refuses with 401 (503 when the keys cannot be fetched), or returns nothing: Next.js then goes on to the route. */
export async function middleware(request: Request): Promise<Response | undefined> {
  const pass = request.headers.get('x-entry-token');
  if (!pass) return refuse(401, 'ENTRY_TOKEN_MISSING', 'no entry pass');
  const memberId = request.headers.get('x-member-id') ?? undefined; // your auth: the session's user id
  const keys = await queueKeys(new URL(request.url).origin).catch(() => null);
  if (!keys) return refuse(503, 'UNAVAILABLE', 'the queue keys could not be fetched');
  const result = await verifyEntryPass(pass, { keys, queue: 'orders', memberId });
  if (!result.valid) return refuse(401, 'ENTRY_TOKEN_INVALID', `entry pass refused: ${result.reason}`);
  return undefined;
}
