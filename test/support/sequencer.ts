// The order test files start in: longest first, so that with several files at once
// (vitest.config.ts, maxWorkers) the run is not left waiting at the end on one long file
// started late. Vitest's own order runs the projects one after another, by name.
// The time of a file is the estimate below, measured on 2 cores, else its last run's
// (Vitest's cache: none on a fresh clone, and a partial run, `-t` or one project, records
// a short time for a long file, hence the estimates first).

import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds a file takes, first matching pattern wins (measured on 2 shared cores; only the order matters). */
const ESTIMATES: Array<[RegExp, number]> = [
  [/^test\/store\/(redis-clock|redis-group-commit|head-moves)\.test\.ts$/, 3],
  // The contracts on Redis sleep through real TTLs and abandonment, their tests side by side.
  [/^test\/store\/redis-(store|contracts)\.test\.ts$/, 40],
  [/^test\/store\/redis-.*\.test\.ts$/, 25],
  [/^test\/types\//, 45], // seven tsc programs
  [/^test\/room\/room\.e2e\.test\.ts$/, 75], // 30 pages and their axe audits, three at a time
  [/^test\/faults\/connection-faults\.test\.ts$/, 40],
  [/^test\/faults\/link-faults\.test\.ts$/, 32],
  [/^test\/faults\/model\.test\.ts$/, 43],
  [/^test\/faults\/multi-process\.test\.ts$/, 37],
  [/^test\/runtimes\/nextjs\.test\.ts$/, 60], // next build (type-check included), then next start
  [/^test\/bench\/simulate-(bots-)?short\.test\.ts$/, 40],
  [/^test\/cli\//, 30],
  [/^test\/runtimes\//, 12],
  [/^test\/package\//, 25],
  [/^test\/docs\/site\.e2e\.test\.ts$/, 50], // npm run docs:build (TypeDoc, VitePress), then Chromium
  [/^test\/dashboard\/.*\.e2e\.test\.ts$/, 22],
  [/^test\/faults\/(process-faults|claimers|cluster|hostile-input)\.test\.ts$/, 15],
  [/^test\/examples\/adapters-ts\.test\.ts$/, 11],
  [/^test\/http\/.*\.test\.ts$/, 16], // event streams at their pace
  [/^test\/faults\//, 6],
  [/\.e2e\.test\.ts$/, 8],
];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const facts = files.map((spec) => {
      const path = spec.moduleId.slice(root.length).replace(/^\//, '');
      const cached = cache.getFileTestResults(`${spec.project.name}:${path}`);
      const estimate = ESTIMATES.find(([pattern]) => pattern.test(path))?.[1];
      return { spec, failed: cached?.failed === true, ms: estimate !== undefined ? estimate * 1000 : (cached?.duration ?? 1000) };
    });
    // The longest first; among equals, those that failed last time.
    facts.sort((a, b) => b.ms - a.ms || Number(b.failed) - Number(a.failed));
    return facts.map((fact) => fact.spec);
  }
}
