// A Server-Sent Events parser for a fetch body (text/event-stream, as the HTML standard reads it):
// events with their name and data, `retry:` fields; comments ignored. Dependency-free, as the client is.

/** One event of a stream: its name (`message` when none was given) and its data lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/** What a stream says: an event, or a new reconnection time in ms. */
export type SseItem = { kind: 'event'; event: SseEvent } | { kind: 'retry'; ms: number };

/**
 * Reads a fetch body as Server-Sent Events, yielding each dispatched event and each valid
 * `retry:`. Ends with the body; an event cut off by the end is dropped, as the standard says.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseItem> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += value;
      let end: RegExpMatchArray | null;
      while ((end = /\r\n|\r(?!$)|\n/.exec(buffer)) !== null) {
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index! + end[0].length);
        if (line === '') {
          if (data.length > 0) yield { kind: 'event', event: { event: event || 'message', data: data.join('\n') } };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value_ = colon === -1 ? '' : line.slice(colon + 1);
        if (value_.startsWith(' ')) value_ = value_.slice(1);
        if (field === 'event') event = value_;
        else if (field === 'data') data.push(value_);
        else if (field === 'retry' && /^\d+$/.test(value_)) yield { kind: 'retry', ms: Number(value_) };
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
