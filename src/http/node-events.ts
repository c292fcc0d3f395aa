// Writes an event stream (event-stream.ts) on Node's response: the shared part of the Express,
// Fastify, Koa and NestJS routes. Each chunk is written (and flushed through a compression
// middleware that offers `flush()`) at once; the client hanging up closes the stream.

import type { ServerResponse } from 'node:http';
import { MAX_UNREAD_BYTES, type MemberStreamHandle } from './event-stream.js';

/** Sends the stream's head and attaches the response; the caller has taken the response over from its framework. */
export function streamToNode(res: ServerResponse, headers: Record<string, string>, stream: MemberStreamHandle): void {
  if (res.destroyed || res.closed) return stream.close(); // the client hung up during the first look
  res.writeHead(200, headers);
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const flushable = res as ServerResponse & { flush?: () => void };
  const close = () => stream.close();
  res.once('close', close);
  res.once('error', close);
  stream.attach({
    write: (chunk) => {
      if (res.writableEnded || res.destroyed) return close();
      // A client that reads nothing is cut (it reconnects, or polls) rather than buffered for without end.
      if (res.writableLength > MAX_UNREAD_BYTES) return void res.destroy();
      res.write(chunk);
      flushable.flush?.();
    },
    end: () => {
      if (!res.writableEnded) res.end();
    },
  });
}
