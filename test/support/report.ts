// Figures from fault and load tests, kept for docs/reliability.md: each test may record
// what it measured into .artifacts/reliability/<name>.json (gitignored).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(import.meta.dirname, '..', '..', '.artifacts', 'reliability');

export function recordFigures(name: string, figures: Record<string, unknown>): void {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, `${name}.json`), `${JSON.stringify({ at: new Date().toISOString(), ...figures }, null, 2)}\n`);
}
