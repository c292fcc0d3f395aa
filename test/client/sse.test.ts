// The client's Server-Sent Events reader, on bodies cut anywhere: what waitForEntry and an app rely on.

import { describe, expect, it } from 'vitest';
import { readSse, type SseItem } from '../../src/client/sse.js';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]): Promise<SseItem[]> {
  const items: SseItem[] = [];
  for await (const item of readSse(body(chunks))) items.push(item);
  return items;
}

describe('readSse', () => {
  const stream = 'retry: 1500\n\n: heartbeat\n\nevent: position\ndata: {"rank":3}\n\ndata: a\ndata: b\n\nevent: ready\r\ndata: {"status":"READY"}\r\n\r\nevent: cut\ndata: never dispatched';
  const expected: SseItem[] = [
    { kind: 'retry', ms: 1500 },
    { kind: 'event', event: { event: 'position', data: '{"rank":3}' } },
    { kind: 'event', event: { event: 'message', data: 'a\nb' } },
    { kind: 'event', event: { event: 'ready', data: '{"status":"READY"}' } },
  ];

  it('reads events, names, multi-line data, CRLF and retry; skips comments; drops an event cut by the end', async () => {
    expect(await read([stream])).toEqual(expected);
  });

  it('reads the same however the body is cut into chunks (one character at a time)', async () => {
    expect(await read([...stream])).toEqual(expected);
  });

  it('ignores a retry that is not a number of ms, and unknown fields', async () => {
    expect(await read(['retry: soon\nid: 7\nfoo: bar\ndata: x\n\n'])).toEqual([{ kind: 'event', event: { event: 'message', data: 'x' } }]);
  });
});
