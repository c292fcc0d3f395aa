// The recipe as a Next.js app of its own: `next build && next start` in this folder (the
// runtimes test does this). `waitgate` resolves to the repository's dist/ (run `npm run build`
// first); in your app it is the installed package and this file needs nothing.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export default {
  turbopack: { root: `${here}/../..` },
  outputFileTracingRoot: `${here}/../..`,
};
