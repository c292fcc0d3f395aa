import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  target: 'node20',
  external: ['ioredis', 'express', 'fastify', 'fastify-plugin', 'koa'],
});
