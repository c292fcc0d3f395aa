// `export default { fetch }`: what `deno serve` (and `bun run`) serve.
import { createApp } from './app.mjs';

export default { fetch: createApp() };
