// Serves a fetch handler (a Hono app's fetch, a waitgate/fetch handler) over real HTTP with
// @hono/node-server, on a free port, for the adapter suite.

import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

export async function serveFetch(fetch: (request: Request) => Response | Promise<Response>): Promise<{ url: string; close(): Promise<void> }> {
  let server!: ReturnType<typeof serve>;
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
