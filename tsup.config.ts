import { defineConfig } from 'tsup';

// One entry per subpath of the exports map. splitting: true lets the CJS subpaths
// share the core chunk, so `instanceof` works across waitgate and waitgate/express.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    express: 'src/http/express.ts',
    fastify: 'src/http/fastify.ts',
    koa: 'src/http/koa.ts',
    client: 'src/client/index.ts',
    fetch: 'src/http/fetch.ts',
    hono: 'src/http/hono.ts',
    nestjs: 'src/http/nestjs.ts',
    pass: 'src/pass/index.ts',
    gate: 'src/gate/index.ts',
    opentelemetry: 'src/opentelemetry/index.ts',
    dashboard: 'src/dashboard/index.ts',
    cli: 'src/cli/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  target: 'node20',
  // The frameworks, ioredis and altcha-lib (waitgate/gate's powGate) are the user's (optional
  // peers). fastify-plugin (MIT, a few lines) is bundled, so users of waitgate/fastify need not
  // install it; so is jose (MIT, no dependencies), which is ESM only: bundled, waitgate/pass
  // also works from require().
  external: ['ioredis', 'redis', 'express', 'fastify', 'koa', 'hono', /^hono\//, /^@nestjs\//, /^rxjs/, '@opentelemetry/api', 'altcha-lib', /^altcha-lib\//],
  noExternal: ['fastify-plugin', 'jose'],
  // The CJS chunks are made from ESM ones by sucrase, whose class-fields transform breaks on
  // jose's `super(...), this.x = ...` constructors: esbuild lowers class fields first.
  esbuildOptions(options) {
    options.supported = { ...options.supported, 'class-field': false, 'class-static-field': false };
  },
});
