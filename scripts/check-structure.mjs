// The structure rules of src/ (CONTRIBUTING.md), checked in CI:
// - no import cycle between modules, type-only imports included (a type cycle is a
//   design cycle: the store interface must import nothing above it);
// - no source file over 400 lines (generated files excepted): a file that grows past it
//   is split by concern (as src/store/memory/ splits MemoryStore), never exempted.
// Imports are read from the source text: `import ... from './x.js'`, `export ... from`,
// and `import('./x.js')` in types, resolved relative to the file.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const MAX_LINES = 400;
const GENERATED = /\.generated\.ts$/;

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = filesUnder(src);
const IMPORT = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
const graph = new Map();
const problems = [];
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (!GENERATED.test(file) && lines > MAX_LINES) problems.push(`${relative(root, file)}: ${lines} lines (at most ${MAX_LINES})`);
  const targets = new Set();
  for (const [, spec] of text.matchAll(IMPORT)) targets.add(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  graph.set(file, [...targets].filter((t) => files.includes(t)));
}

// Tarjan's strongly connected components: any component of two or more files is a cycle.
let index = 0;
const stack = [];
const meta = new Map();
function connect(v) {
  meta.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v)) {
    if (!meta.has(w)) {
      connect(w);
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
    } else if (meta.get(w).onStack) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
  }
  if (meta.get(v).low === meta.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      meta.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) problems.push(`import cycle: ${component.map((f) => relative(root, f)).join(' -> ')}`);
  }
}
for (const file of files) if (!meta.has(file)) connect(file);

if (problems.length > 0) {
  for (const p of problems) console.error(`check-structure: ${p}`);
  process.exit(1);
}
console.log(`check-structure: ${files.length} files in src/, no import cycle, none over ${MAX_LINES} lines`);
