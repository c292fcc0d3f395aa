// waitgate/dashboard: a live operator page for one or more queues, as a Node request handler to mount under a path.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { WaitgateConfigError } from '../errors.js';
import { parseStrict } from '../options.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { applyControls, isJsonContentType, parseControlsRequest, readJson, snapshot, type DashboardQueueList } from './api.js';
import { buildPage } from './page.js';
import { errorAnswer, send, sendPage, type DashboardAnswer } from './respond.js';
import { isCrossSite, isSameOrigin, locate } from './routing.js';

export type { DashboardControlsResult, DashboardQueueList, DashboardSnapshot } from './api.js';
export { MAX_BODY_BYTES } from './api.js';
export type { DashboardErrorBody, DashboardErrorCode } from './respond.js';

/** Decides whether a request may see the dashboard and use it; anything but `true` (or a throw) answers 403. */
export type DashboardAuthorize<Req extends IncomingMessage = IncomingMessage> = (req: Req) => boolean | string | Promise<boolean | string>;

/** Options of {@link createDashboard}. */
export interface DashboardOptions<Req extends IncomingMessage = IncomingMessage> {
  /** The queues the page can switch between: an array (named by `queue.name`) or a record by the name to show. */
  queues: readonly WaitingQueue[] | Readonly<Record<string, WaitingQueue>>;
  /**
   * Required. Called for every request (the page and the API) with the request as the
   * framework passes it; `true` or a non-empty string (who the operator is: recorded as the
   * actor of every change they make, in the controls log) lets it through, anything else
   * answers 403. A throw or a rejection also answers 403 (and is reported as a process warning).
   */
  authorize: DashboardAuthorize<Req>;
  /**
   * The path the dashboard is mounted at, e.g. `/ops/waitgate`, for servers that pass it
   * the full URL (`node:http`, a Koa or Fastify hook). Requests outside it go to `next`
   * (or get 404). Not needed with Express `app.use(path, handler)`, which cuts the path itself.
   */
  basePath?: string;
  /**
   * The origins the page is served from, e.g. `https://ops.example.com`, for state changes.
   * Default: the request's own (Express `req.protocol` and `req.host`, which follow its
   * `trust proxy` setting; else TLS on the socket and the Host header). Set it behind a
   * proxy that terminates TLS or rewrites the Host header.
   */
  origin?: string | readonly string[];
  /** The page's title. Default `waitgate`. */
  title?: string;
  /** Show the figures and controls in force without the means to change them: `POST /api/controls` answers 403. */
  readOnly?: boolean;
}

/**
 * A Node request handler: `(req, res, next?)`. It answers every request under its mount
 * and calls `next()` (when given) for one outside `basePath`. It never rejects.
 */
export type DashboardHandler<Req extends IncomingMessage = IncomingMessage> = (
  req: Req,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<void>;

// Duck-typed rather than instanceof: the ESM and CJS builds each have their own WaitingQueue class.
const QUEUE_METHODS = ['stats', 'controls', 'setControls'] as const;
const isQueue = (q: unknown): q is WaitingQueue =>
  typeof q === 'object' &&
  q !== null &&
  typeof (q as { name?: unknown }).name === 'string' &&
  QUEUE_METHODS.every((m) => typeof (q as Record<string, unknown>)[m] === 'function');

const ORIGIN = /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/;
const optionsSchema = z.strictObject({
  queues: z.custom<DashboardOptions['queues']>(
    (q) => typeof q === 'object' && q !== null && (Array.isArray(q) ? q.every(isQueue) : Object.values(q).every(isQueue)),
    'must be an array of WaitingQueue, or a record of them by name',
  ),
  authorize: z.custom<DashboardAuthorize<never>>(
    (f) => typeof f === 'function',
    'is required: a function (req) => boolean | Promise<boolean> that lets an operator in (the dashboard changes a live sale)',
  ),
  basePath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/, 'must be a path like /ops/waitgate')
    .optional(),
  origin: z
    .union([
      z.string().regex(ORIGIN, 'must be an origin like https://ops.example.com'),
      z.array(z.string().regex(ORIGIN, 'must be an origin like https://ops.example.com')).min(1),
    ])
    .optional(),
  title: z.string().min(1).max(100).optional(),
  readOnly: z.boolean().optional(),
});

/** The queues by name; an empty list or a name used twice is refused. */
function queuesByName(queues: DashboardOptions['queues']): Map<string, WaitingQueue> {
  const entries: Array<[string, WaitingQueue]> = Array.isArray(queues)
    ? (queues as readonly WaitingQueue[]).map((q) => [q.name, q])
    : Object.entries(queues as Record<string, WaitingQueue>);
  if (entries.length === 0) throw configError('queues', 'must hold at least one queue');
  const byName = new Map<string, WaitingQueue>();
  for (const [name, queue] of entries) {
    if (name === '' || name.length > 200) throw configError('queues', `a queue name must be 1 to 200 characters ("${name.slice(0, 20)}…")`);
    if (byName.has(name)) throw configError('queues', `two queues are named "${name}": pass a record { [name]: queue } to tell them apart`);
    byName.set(name, queue);
  }
  return byName;
}

function configError(option: string, message: string): WaitgateConfigError {
  return new WaitgateConfigError(option, message);
}

/** The actor of an authorized request (authorize's string, or DASHBOARD_ACTOR for `true`); null: refused. */
async function authorizedActor<Req extends IncomingMessage>(authorize: DashboardAuthorize<Req>, req: Req): Promise<string | null> {
  try {
    const verdict = await authorize(req);
    return verdict === true ? DASHBOARD_ACTOR : typeof verdict === 'string' && verdict !== '' ? verdict.slice(0, 200) : null;
  } catch (error) {
    process.emitWarning(`waitgate dashboard: authorize() threw, the request was refused (403): ${error instanceof Error ? error.message : String(error)}`, {
      code: 'WAITGATE_DASHBOARD_AUTHORIZE',
    });
    return null;
  }
}

/** The actor of a change made through a dashboard whose `authorize` answered `true`. */
const DASHBOARD_ACTOR = 'dashboard';

const FORBIDDEN = errorAnswer(403, 'FORBIDDEN', 'Not authorized for the waitgate dashboard.');
const NOT_FOUND = errorAnswer(404, 'NOT_FOUND', 'No such dashboard route.');
const methodNotAllowed = (allow: string) => errorAnswer(405, 'METHOD_NOT_ALLOWED', `Use ${allow}.`, { headers: { allow } });
const QUEUE_PATH = /^\/api\/queues\/([^/]+)$/;

/**
 * Creates the dashboard: a live page with charts of waiting members, admissions per
 * second, active members against `maxActive` and the wait, the totals, the controls in
 * force and forms to change them, and the JSON API behind it.
 *
 * Routes, under the mount: `GET /` (the page), `GET /api/queues`, `GET /api/queues/:name`
 * (stats and controls), `POST /api/controls` (`{ queue, patch }`, a `setControls` patch,
 * accepted only from the dashboard's own origin and as `application/json`).
 *
 * @param options - see {@link DashboardOptions}; `queues` and `authorize` are required.
 * @returns a Node request handler `(req, res, next?)`.
 * @throws {@link index!WaitgateConfigError} (code `CONFIG_INVALID`) for a missing `authorize`, no
 *   queues, two queues of one name, or an unknown or bad option.
 *
 * @example
 * ```ts
 * app.use('/ops/waitgate', createDashboard({ queues: [queue], authorize: (req) => isOperator(req) }));
 * ```
 */
export function createDashboard<Req extends IncomingMessage = IncomingMessage>(options: DashboardOptions<Req>): DashboardHandler<Req> {
  const parsed = parseStrict(optionsSchema, options);
  const queues = queuesByName(parsed.queues);
  const authorize = parsed.authorize as DashboardAuthorize<Req>;
  const basePath = parsed.basePath === undefined || parsed.basePath === '/' || parsed.basePath === '' ? null : parsed.basePath.replace(/\/+$/, '');
  const origins = parsed.origin === undefined ? null : (typeof parsed.origin === 'string' ? [parsed.origin] : parsed.origin).map((o) => o.toLowerCase());
  const readOnly = parsed.readOnly ?? false;
  const page = buildPage({ title: parsed.title ?? 'waitgate', readOnly });
  const list: DashboardQueueList = { queues: [...queues.keys()].map((name) => ({ name })), readOnly };

  async function route(req: Req, path: string, actor: string): Promise<DashboardAnswer | 'page'> {
    const method = req.method ?? 'GET';
    const reading = method === 'GET' || method === 'HEAD';
    if (path === '/') return reading ? 'page' : methodNotAllowed('GET');
    if (path === '/api/controls') {
      if (method !== 'POST') return methodNotAllowed('POST');
      if (!isSameOrigin(req, origins)) return errorAnswer(403, 'FORBIDDEN', 'State changes are accepted only from the dashboard page itself (same origin).');
      if (readOnly) return errorAnswer(403, 'FORBIDDEN', 'This dashboard is read-only.');
      if (!isJsonContentType(req)) return errorAnswer(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON (Content-Type: application/json).');
      const body = await readJson(req);
      if (!body.ok) return body.answer;
      const request = parseControlsRequest(body.value, queues);
      if (!request.ok) return request.answer;
      return applyControls(request.name, request.queue, request.patch, actor);
    }
    if (!path.startsWith('/api/')) return NOT_FOUND;
    if (isCrossSite(req)) return errorAnswer(403, 'FORBIDDEN', 'The dashboard API answers only its own page.');
    if (path === '/api/queues') return reading ? { status: 200, body: list } : methodNotAllowed('GET');
    const match = QUEUE_PATH.exec(path);
    if (!match) return NOT_FOUND;
    if (!reading) return methodNotAllowed('GET');
    let name: string;
    try {
      name = decodeURIComponent(match[1]!);
    } catch {
      return errorAnswer(400, 'BAD_REQUEST', 'The queue name in the path is not valid percent-encoding.');
    }
    const queue = queues.get(name);
    if (!queue) return errorAnswer(404, 'UNKNOWN_QUEUE', `There is no queue "${name.slice(0, 100)}" on this dashboard.`);
    return snapshot(name, queue);
  }

  return async function waitgateDashboard(req: Req, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    try {
      const where = locate(req, basePath);
      if (where.kind === 'outside') {
        if (typeof next === 'function') return next();
        return send(res, NOT_FOUND, req.method);
      }
      const actor = await authorizedActor(authorize, req);
      if (actor === null) return send(res, FORBIDDEN, req.method);
      if (where.kind === 'redirect') return send(res, { status: 302, headers: { location: where.location } }, req.method);
      const answer = await route(req, where.path, actor);
      if (answer === 'page') return sendPage(res, page.html, page.csp, req.method);
      send(res, answer, req.method);
    } catch (error) {
      // Not reached by design (every known failure has its answer); never leak it to the client.
      process.emitWarning(`waitgate dashboard: ${error instanceof Error ? error.message : String(error)}`, { code: 'WAITGATE_DASHBOARD' });
      send(res, errorAnswer(500, 'INTERNAL', 'The dashboard failed to answer; see the server log.'), req.method);
    }
  };
}
