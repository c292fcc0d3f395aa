// The documentation site as built by `npm run docs:build` (docs/.vitepress/dist, its dead links
// already refused by VitePress), served by `vitepress serve` and opened in Debian's Chromium:
// the home, getting-started and troubleshooting pages render with no console error and no failed
// request, and the API reference from TypeDoc is in the site. Screenshots go to .artifacts/site/.

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { startServer, type Server } from '../runtimes/table.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const built = `${root}docs/.vitepress/dist`;
const shots = `${root}.artifacts/site`;

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

let server: Server;
let browser: Browser;
beforeAll(async () => {
  if (!existsSync(`${built}/index.html`)) throw new Error('docs/.vitepress/dist is missing: run `npm run docs:build` first (.ci/run does).');
  await mkdir(shots, { recursive: true });
  const port = await freePort();
  server = await startServer(`${root}node_modules/.bin/vitepress`, ['serve', 'docs', '--port', String(port)], { cwd: root, listening: new RegExp(`localhost:(${port})`) });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('documentation site', () => {
  for (const [page, heading] of [
    ['/', 'waitgate'],
    ['/getting-started.html', 'Getting started in 10 minutes'],
    ['/troubleshooting.html', 'Troubleshooting'],
  ] as const) {
    it(`${page} renders "${heading}" with no console error and no failed request`, async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const tab = await context.newPage();
      const problems: string[] = [];
      tab.on('console', (message) => void (message.type() === 'error' && problems.push(`console: ${message.text()}`)));
      tab.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      tab.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
      tab.on('response', (response) => void (response.status() >= 400 && problems.push(`${response.status()}: ${response.url()}`)));
      await tab.goto(server.url.replace('127.0.0.1', 'localhost') + page, { waitUntil: 'networkidle' });
      await expect.poll(() => tab.locator('h1').first().textContent()).toContain(heading);
      await tab.screenshot({ path: `${shots}/${page === '/' ? 'home' : page.slice(1, -5)}.png` });
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('links the TypeDoc API reference, which is in the site', async () => {
    expect(existsSync(`${built}/api/index.html`)).toBe(true);
    const response = await fetch(`${server.url.replace('127.0.0.1', 'localhost')}/api/index.html`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('WaitingQueue');
  });
});
