// Deno.serve on a free port; prints "listening <port>" for the test.
import { createApp } from './app.mjs';

globalThis.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(`listening ${port}`) }, createApp());
