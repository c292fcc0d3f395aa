// The documentation site: VitePress over docs/ (the same Markdown files GitHub shows), with the
// TypeDoc reference built into docs/public/api/ by `npm run docs:build`. Dead links fail the
// build (VitePress's default, kept on).
import { cpSync } from 'node:fs';
import { defineConfig } from 'vitepress';

/** GitHub's heading ids, so the anchors that work on GitHub work on the site too. */
const slugify = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

export default defineConfig({
  title: 'waitgate',
  description: 'Admission control for flash sales: a virtual waiting queue in front of an order API.',
  cleanUrls: false,
  // TypeDoc copies the Markdown files README links to into public/api/media: not pages.
  srcExclude: ['public/**'],
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  // Links into the repository (../src, ../examples, ../README.md) are for readers on GitHub;
  // on the site they point outside it. Everything else must resolve.
  ignoreDeadLinks: [
    /^https?:\/\/localhost\b/,
    /^\.\.?\/\.\.\//,
    /^\.\.\/(README|CONTRIBUTING|SECURITY|CHANGELOG)/,
    /^\.\.\/(src|examples|test|bench|lua|scripts)\//,
    /^\.\.\/[\w.-]+\.(ts|json|mjs)$/,
  ],
  markdown: { anchor: { slugify } },
  // The charts are linked (`[members waiting](images/perf-sim-waiting.svg)`), not embedded, so
  // VitePress does not bundle them: copied beside the pages, where those links point.
  buildEnd: ({ srcDir, outDir }) => cpSync(`${srcDir}/images`, `${outDir}/images`, { recursive: true }),
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/getting-started' },
      { text: 'Running a sale', link: '/running-a-sale' },
      { text: 'API reference', link: '/api/index.html', target: '_self' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'Getting started', link: '/getting-started' },
          { text: 'Running a sale', link: '/running-a-sale' },
          { text: 'Frameworks and runtimes', link: '/frameworks' },
          { text: 'HTTP/JSON contract', link: '/http-api' },
          { text: 'Polling client', link: '/client' },
          { text: 'Signed entry passes', link: '/signed-passes' },
          { text: 'Fair entry', link: '/fair-entry' },
          { text: 'Waiting room', link: '/waiting-room' },
          { text: 'Always on: safety net, stock, audit', link: '/always-on' },
          { text: 'Troubleshooting', link: '/troubleshooting' },
        ],
      },
      {
        text: 'Operating',
        items: [
          { text: 'Seeing a live sale', link: '/observability' },
          { text: 'The command', link: '/cli' },
          { text: 'Dashboard', link: '/dashboard' },
          { text: 'Metrics', link: '/metrics' },
          { text: 'Redis in production', link: '/redis' },
          { text: 'At scale', link: '/at-scale' },
          { text: 'Scaling (measured)', link: '/scaling' },
        ],
      },
      {
        text: 'Inside',
        items: [
          { text: 'Architecture', link: '/architecture' },
          { text: 'API guide', link: '/api-guide' },
          { text: 'Performance', link: '/performance' },
          { text: 'Reliability', link: '/reliability' },
          { text: 'Development', link: '/development' },
        ],
      },
    ],
    search: { provider: 'local' },
  },
});
