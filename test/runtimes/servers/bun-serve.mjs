// Bun.serve on a free port; prints "listening <port>" for the test.
import { createApp } from './app.mjs';

const server = globalThis.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: createApp() });
console.log(`listening ${server.port}`);
