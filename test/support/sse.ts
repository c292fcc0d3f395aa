// A member's event stream (GET …/events) as a test reads it: over real HTTP with fetch, each item
// parsed by the client's own SSE reader, with a generous bound on every wait.

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
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
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
    close: () => abort.abort(),
  };
}
