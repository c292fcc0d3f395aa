// The dashboard's JSON API: the queue list, one queue's stats and controls, and a controls change.

import type { IncomingMessage } from 'node:http';
import type { QueueControls } from '../controls.js';
import { isWaitgateError, type WaitgateConfigError } from '../errors.js';
import { toHttpResponse } from '../http/error-response.js';
import type { ControlsLogEntry, QueueStats } from '../types.js';
import type { WaitingQueue } from '../waiting-queue.js';
import { errorAnswer, type DashboardAnswer } from './respond.js';
import { header } from './routing.js';

/** Largest body of `POST /api/controls`, in bytes. A patch is a few hundred. */
export const MAX_BODY_BYTES = 16 * 1024;

/** `GET /api/queues`: the queues the page can switch between. */
export interface DashboardQueueList {
  queues: Array<{ name: string }>;
  /** True when the dashboard was made with `readOnly`: `POST /api/controls` is refused. */
  readOnly: boolean;
}

/** `GET /api/queues/:name`: what the page draws each second. */
export interface DashboardSnapshot {
  queue: string;
  /** The server's clock when it answered, epoch ms. */
  at: number;
  stats: QueueStats;
  /** The controls in force; null when the queue's store keeps none (a custom store). */
  controls: QueueControls | null;
  /** The last changes of the controls, newest first (at most DASHBOARD_LOG_LENGTH); empty when the store keeps no log. */
  log: ControlsLogEntry[];
}

/** How many changes of the controls the dashboard shows. */
export const DASHBOARD_LOG_LENGTH = 20;

/** `POST /api/controls` answers 200 with the controls in force after the change. */
export interface DashboardControlsResult {
  queue: string;
  controls: QueueControls;
}

const isStoreWithoutControls = (error: unknown) =>
  isWaitgateError(error) && error.code === 'CONFIG_INVALID' && (error as WaitgateConfigError).option === 'store';

/** The answer for an error of a queue call: waitgate's own mapping (503 when the store is down), never a 500 for what it knows. */
export function answerForError(error: unknown): DashboardAnswer {
  if (isStoreWithoutControls(error))
    return errorAnswer(501, 'CONTROLS_UNSUPPORTED', "This queue's store keeps no runtime controls (RedisStore and MemoryStore do).");
  const mapped = toHttpResponse(error);
  if (mapped) {
    const { 'cache-control': _, ...headers } = mapped.headers;
    return { status: mapped.status, headers, body: mapped.body };
  }
  return errorAnswer(500, 'INTERNAL', 'The dashboard failed to answer; see the server log.');
}

/** Reads one queue's stats and controls together. */
export async function snapshot(name: string, queue: WaitingQueue): Promise<DashboardAnswer> {
  const [stats, controls, log] = await Promise.allSettled([queue.stats(), queue.controls(), queue.controlsLog({ limit: DASHBOARD_LOG_LENGTH })]);
  if (stats.status === 'rejected') return answerForError(stats.reason);
  if (controls.status === 'rejected' && !isStoreWithoutControls(controls.reason)) return answerForError(controls.reason);
  if (log.status === 'rejected' && !isStoreWithoutControls(log.reason)) return answerForError(log.reason);
  const body: DashboardSnapshot = {
    queue: name,
    at: Date.now(),
    stats: stats.value,
    controls: controls.status === 'fulfilled' ? controls.value : null,
    log: log.status === 'fulfilled' ? log.value : [],
  };
  return { status: 200, body };
}

/** A JSON body, or the answer that refuses it. Reads at most MAX_BODY_BYTES. */
type BodyResult = { ok: true; value: unknown } | { ok: false; answer: DashboardAnswer };

const TOO_LARGE: BodyResult = {
  ok: false,
  answer: errorAnswer(413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${MAX_BODY_BYTES} bytes.`, { headers: { connection: 'close' } }),
};
const notJson = (why: string): BodyResult => ({ ok: false, answer: errorAnswer(400, 'BAD_REQUEST', `The body is not valid JSON: ${why}`) });

/** `application/json`, optionally with `charset=utf-8`: anything else is refused (415), which also rules out a cross-site HTML form. */
export function isJsonContentType(req: IncomingMessage): boolean {
  const [type, ...params] = (header(req, 'content-type') ?? '').split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

function parse(text: string): BodyResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return notJson(error instanceof Error ? error.message : 'unreadable');
  }
}

/**
 * Reads the request body as JSON. A body parser that ran before the dashboard (Express
 * `express.json()`) has consumed the stream: its `req.body` is used then.
 */
export function readJson(req: IncomingMessage): Promise<BodyResult> {
  const parsed = (req as { body?: unknown }).body;
  if (req.readableEnded || parsed !== undefined) {
    if (Buffer.isBuffer(parsed)) return Promise.resolve(parse(parsed.toString('utf8')));
    if (typeof parsed === 'string') return Promise.resolve(parse(parsed));
    if (parsed !== undefined) return Promise.resolve({ ok: true, value: parsed });
    return Promise.resolve(notJson('the body was read by another middleware before the dashboard: mount the dashboard before body parsers'));
  }
  const declared = Number(header(req, 'content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    req.resume(); // let the body drain rather than reading it
    return Promise.resolve(TOO_LARGE);
  }
  return new Promise<BodyResult>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: BodyResult) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done(TOO_LARGE);
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        done(notJson('it is not UTF-8'));
        return;
      }
      done(parse(text));
    };
    const onError = () => done({ ok: false, answer: errorAnswer(400, 'BAD_REQUEST', 'The body could not be read.') });
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}

/**
 * Checks the body of `POST /api/controls`: exactly `{ queue, patch }`, a known queue,
 * a patch that is an object. The patch's fields are checked by `setControls`.
 */
export function parseControlsRequest(
  body: unknown,
  queues: ReadonlyMap<string, WaitingQueue>,
): { ok: true; name: string; queue: WaitingQueue; patch: Record<string, unknown> } | { ok: false; answer: DashboardAnswer } {
  const bad = (message: string, option?: string) => ({
    ok: false as const,
    answer: errorAnswer(400, 'BAD_REQUEST', message, option === undefined ? {} : { option }),
  });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('The body must be a JSON object { "queue": name, "patch": {...} }.');
  const unknown = Object.keys(body).filter((key) => key !== 'queue' && key !== 'patch');
  if (unknown.length > 0) return bad(`Unknown field "${unknown[0]}": the body is { "queue": name, "patch": {...} }.`, unknown[0]);
  const { queue: name, patch } = body as { queue?: unknown; patch?: unknown };
  if (typeof name !== 'string') return bad('"queue" must be the name of a queue (a string).', 'queue');
  const queue = queues.get(name);
  if (!queue)
    return { ok: false, answer: errorAnswer(400, 'UNKNOWN_QUEUE', `There is no queue "${name.slice(0, 100)}" on this dashboard.`, { option: 'queue' }) };
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return bad('"patch" must be an object of setControls fields.', 'patch');
  return { ok: true, name, queue, patch: patch as Record<string, unknown> };
}

/** Applies a checked patch: 200 with the controls after it, 400 naming a bad field (nothing written), 503 when the store is down. */
export async function applyControls(name: string, queue: WaitingQueue, patch: Record<string, unknown>, actor: string): Promise<DashboardAnswer> {
  try {
    const controls = await queue.setControls(patch, { actor });
    const body: DashboardControlsResult = { queue: name, controls };
    return { status: 200, body };
  } catch (error) {
    if (isWaitgateError(error) && error.code === 'CONFIG_INVALID' && !isStoreWithoutControls(error)) {
      const option = (error as WaitgateConfigError).option;
      return errorAnswer(400, 'CONFIG_INVALID', error.message, { option: `patch.${option}` });
    }
    return answerForError(error);
  }
}
