// One header of whatever request object an adapter hands to a gate: a Web Request (fetch), a Hono
// Context (its `req.raw`), or a Node-style object with `headers` (Express, Fastify, Koa's ctx,
// NestJS on either platform). Duck-typed, so one gate works behind every adapter.

/** The value of header `name` (case-insensitive) of a request, or undefined. Repeated values are joined with ', '. */
export function requestHeader(req: unknown, name: string): string | undefined {
  const lower = name.toLowerCase();
  const r = req as { headers?: unknown; req?: { raw?: { headers?: unknown } } } | null | undefined;
  const headers = r?.headers ?? r?.req?.raw?.headers;
  if (headers === undefined || headers === null || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(lower) ?? undefined;
  const value = (headers as Record<string, unknown>)[lower];
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : undefined;
}

/**
 * The entry token (or signed pass) a request carries, from the raw header value: the one place
 * every guard reads it. A repeated header arrives as an array or a joined string: INVALID then.
 */
export function entryTokenOf(tokenHeaderValue: string | string[] | null | undefined): string | undefined {
  const token = Array.isArray(tokenHeaderValue) ? (tokenHeaderValue.length === 0 ? undefined : tokenHeaderValue.join(',')) : tokenHeaderValue;
  return token?.trim() ?? undefined;
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/;\s*/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
