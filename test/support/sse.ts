// A member's event stream (GET …/events) as a test reads it: over real HTTP on a connection of its
// own (closing it really hangs up: no pooled socket outlives the test's server), each item parsed
// by the client's own SSE reader, with a generous bound on every wait.

import { request } from 'node:http';
import { Readable } from 'node:stream';
import { readSse, type SseItem } from '../../src/client/sse.js';

export interface OpenStream {
  response: Response;
  /** The next event or retry field; null when the stream ended. Rejects after `boundMs`. */
  next(boundMs?: number): Promise<SseItem | null>;
  /** The next event (retry fields skipped), with its data parsed as JSON. */
  nextEvent(boundMs?: number): Promise<{ event: string; data: unknown } | null>;
  close(): void;
}

/** Opens `url` with these headers; a refusal (not a stream) is returned with `next` answering null. */
export async function openEvents(url: string, headers: Record<string, string>): Promise<OpenStream> {
  const req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false });
  const response = await new Promise<Response>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const head = new Headers();
      for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') head.set(name, value);
      resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode, headers: head }));
    });
    req.end();
  });
  const items = response.ok && response.body ? readSse(response.body) : null;
  const next = async (boundMs = 30_000): Promise<SseItem | null> => {
    if (!items) return null;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no event within ${boundMs} ms`)), boundMs);
    });
    try {
      const item = await Promise.race([items.next(), bound]);
      return item.done ? null : item.value;
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    response,
    next,
    async nextEvent(boundMs) {
      for (;;) {
        const item = await next(boundMs);
        if (item === null) return null;
        if (item.kind === 'event') return { event: item.event.event, data: JSON.parse(item.event.data) as unknown };
      }
    },
    close: () => void req.destroy(),
  };
}
