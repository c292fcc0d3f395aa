// Writing the dashboard's answers: the security headers every answer carries, JSON bodies and error bodies.

import type { ServerResponse } from 'node:http';
import type { HttpErrorCode } from '../http/error-response.js';

/** Body codes of the dashboard's error answers, beside waitgate's own (`STORE_UNAVAILABLE`, ...). */
export type DashboardErrorCode =
  | HttpErrorCode
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'BAD_REQUEST'
  | 'UNKNOWN_QUEUE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'CONTROLS_UNSUPPORTED'
  | 'INTERNAL';

/** The body of every error answer of the dashboard. `option` names the bad field of a refused patch. */
export interface DashboardErrorBody {
  error: { code: DashboardErrorCode; message: string; option?: string };
}

/** An answer before it is written: status, extra headers (lower case) and a JSON body. */
export interface DashboardAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** JSON and every other answer but the page: nothing may load, frame or run. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Headers on every answer: never cached, never sniffed, never framed, never sent a referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'content-security-policy': API_CSP,
});

/** An error answer with the body `{ error: { code, message } }`. */
export function errorAnswer(
  status: number,
  code: DashboardErrorCode,
  message: string,
  extra: { option?: string; headers?: Record<string, string> } = {},
): DashboardAnswer {
  const body: DashboardErrorBody = { error: { code, message, ...(extra.option === undefined ? {} : { option: extra.option }) } };
  return { status, headers: extra.headers ?? {}, body };
}

/** Writes an answer: the security headers, then its own, then the JSON body (none for HEAD or 204). */
export function send(res: ServerResponse, answer: DashboardAnswer, method: string | undefined): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const json = answer.body === undefined ? undefined : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...SECURITY_HEADERS,
    ...(json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(json)) }),
    ...answer.headers,
  });
  res.end(method === 'HEAD' ? undefined : json);
}

/** Writes the page with its own headers (a Content-Security-Policy that lets its inline code run). */
export function sendPage(res: ServerResponse, html: string, csp: string, method: string | undefined): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-security-policy': csp,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
  });
  res.end(method === 'HEAD' ? undefined : html);
}
