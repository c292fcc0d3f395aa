// The documentation site, built here as `npm run docs:build` does (TypeDoc, then VitePress, which
// fails on a dead link), served by `vitepress serve` and opened in Debian's Chromium:
// the home, getting-started and troubleshooting pages render with no console error and no failed
// request, and the API reference from TypeDoc is in the site. Screenshots go to .artifacts/site/.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LinkChecker } from 'linkinator';
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
  // docs:build without its predocs:build: the generated sources are there (npm test's build made
  // them), and rewriting them now would race the unit files importing them beside this one.
  for (const [bin, args] of [
    ['typedoc', []],
    ['vitepress', ['build', 'docs']],
  ] as const) {
    await promisify(execFile)(`${root}node_modules/.bin/${bin}`, [...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => {
        throw new Error(`${bin} ${args.join(' ')} failed (npm run docs:build):\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      },
    );
  }
  await mkdir(shots, { recursive: true });
  const port = await freePort();
  server = await startServer(`${root}node_modules/.bin/vitepress`, ['serve', 'docs', '--port', String(port)], {
    cwd: root,
    listening: new RegExp(`localhost:(${port})`),
  });
  browser = await launchChromium();
}, 240_000);
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

  it('every internal link of the built site resolves, anchors included (linkinator over the served site; external links skipped: CI is offline)', async () => {
    const origin = server.url.replace('127.0.0.1', 'localhost');
    // Links into the repository (../examples/..., ../bench/..., ../CONTRIBUTING.md) are for readers
    // on GitHub (docs/.vitepress/config.mts, ignoreDeadLinks): not in the site, so the crawler
    // skips them, and each must name a file of the repository (a .md page VitePress rewrote to .html).
    const repository = new RegExp(`^${origin}/(src|examples|test|bench|lua|scripts)/|^${origin}/[A-Z]+\\.html$|^${origin}/[\\w.-]+\\.(ts|json|mjs)$`);
    const result = await new LinkChecker().check({
      path: `${origin}/`,
      recurse: true,
      concurrency: 8,
      checkFragments: true,
      linksToSkip: async (link) => !link.startsWith(origin) || repository.test(link),
    });
    const broken = result.links.filter((link) => link.state === 'BROKEN').map((link) => `${link.status}: ${link.url} (on ${link.parent})`);
    expect(broken).toEqual([]);
    expect(result.links.filter((link) => link.state === 'OK').length).toBeGreaterThan(50); // it did crawl the site
    const intoRepository = [...new Set(result.links.filter((link) => repository.test(link.url)).map((link) => link.url.split('#')[0]!))];
    expect(intoRepository.length).toBeGreaterThan(10);
    const missing = intoRepository.filter((url) => {
      const path = decodeURIComponent(new URL(url).pathname.slice(1));
      return !existsSync(`${root}${path}`) && !existsSync(`${root}${path.replace(/\.html$/, '.md')}`);
    });
    expect(missing).toEqual([]);
  });

  it('links the TypeDoc API reference, which is in the site', async () => {
    expect(existsSync(`${built}/api/index.html`)).toBe(true);
    const response = await fetch(`${server.url.replace('127.0.0.1', 'localhost')}/api/index.html`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('WaitingQueue');
  });
});
