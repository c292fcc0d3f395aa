// The invite code of `POST <prefix>/enter` (SPEC §17): the JSON body `{ "code": "..." }` of
// whatever request an adapter hands over. A body the framework already parsed is used
// (Express with express.json(), Fastify, Koa with a body parser, NestJS); else the raw body
// is read here: a Web Request (fetch; Hono's `c.req.raw`, cloned), or a Node request stream
// (Express or Koa without a parser). At most MAX_BODY_BYTES; a body that is not a JSON
// object carries no code.

/** The most bytes of an enter body read for its code. */
export const MAX_BODY_BYTES = 4096;

type NodeStream = AsyncIterable<Buffer | string> & { readableEnded?: boolean; headers?: Record<string, unknown> };

/** The `code` field of an enter request's body (any JSON value: the queue judges it), or undefined. */
export async function enterCodeOf(req: unknown): Promise<unknown> {
  const body = await bodyOf(req);
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { code?: unknown }).code : undefined;
}

async function bodyOf(req: unknown): Promise<unknown> {
  const r = req as { body?: unknown; request?: { body?: unknown }; req?: unknown } | null | undefined;
  if (r === null || r === undefined || typeof r !== 'object') return undefined;
  if (isWebRequest(r)) return parse(await readWeb(r));
  const honoRaw = (r.req as { raw?: unknown } | undefined)?.raw;
  if (isWebRequest(honoRaw)) return parse(await readWeb(honoRaw));
  if (r.request && typeof r.request === 'object' && isNodeStream(r.req)) {
    // Koa's ctx (ctx.body is the response's): its request's parsed body, else the raw ctx.req.
    return r.request.body !== undefined ? parsed(r.request.body) : parse(await readNode(r.req));
  }
  if (r.body !== undefined) return parsed(r.body); // Express with a parser, Fastify, NestJS
  return isNodeStream(r) ? parse(await readNode(r)) : undefined; // Express without a parser
}

function isWebRequest(value: unknown): value is Request {
  return typeof value === 'object' && value !== null && typeof (value as Request).clone === 'function' && typeof (value as Request).text === 'function';
}

function isNodeStream(value: unknown): value is NodeStream {
  return typeof value === 'object' && value !== null && typeof (value as NodeStream)[Symbol.asyncIterator] === 'function';
}

async function readWeb(request: Request): Promise<string> {
  if (request.body === null || request.bodyUsed) return '';
  const text = await request.clone().text();
  return text.length > MAX_BODY_BYTES ? '' : text;
}

async function readNode(stream: NodeStream): Promise<string> {
  if (stream.readableEnded) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return '';
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A body a framework parsed: an object, or text / bytes it left raw. */
function parsed(body: unknown): unknown {
  if (typeof body === 'string') return parse(body);
  if (body instanceof Uint8Array) return parse(Buffer.from(body).toString('utf8'));
  return body;
}

function parse(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
