// Type-checks the code a reader copies: every ```ts / ```js block of README.md and docs/*.md,
// and each TypeScript example under examples/, each as its own strict TypeScript program
// (one snippet's `declare module` augmentation cannot leak into another).
//
// `waitgate`, `waitgate/express`, ... resolve as they do for a user: through this package's
// exports map to the built declarations in dist/ (run `npm run build` first).
//
// Comments right before a block (they do not render on GitHub or npm):
//   <!-- snippet: skip -->            not checked (for listings that are not meant to compile)
//   <!-- snippet-preamble: NAME -->   the files of scripts/snippets/NAME/ sit beside the snippet,
//                                     in its program: modules it imports (`./my-app.js`) or
//                                     declarations of what it takes as given (`app`, `db`)
//
// Each checked block is written to .artifacts/snippets/<file>-L<line>/ with a tsconfig.json, so
// `npx tsc -p .artifacts/snippets/README-L169` reproduces one check.
//
// Usage: node scripts/check-snippets.mjs [markdown files...]   (default: README.md docs/*.md)

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const preambleDir = join(root, 'scripts', 'snippets');
const outDir = join(root, '.artifacts', 'snippets');
const rel = (file) => relative(root, file);

const LANGUAGES = { ts: 'ts', typescript: 'ts', mts: 'ts', js: 'js', javascript: 'js', mjs: 'js' };
const FENCE = /^( *)(`{3,}|~{3,})\s*([\w+-]*)/;
const DIRECTIVE = /^<!--\s*(snippet(?:-[a-z]+)?)\s*:\s*(.*?)\s*-->$/;

/** What a reader's project would have: strict, ESM (NodeNext), Node types; JS checked too. */
const tsconfigJson = {
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    esModuleInterop: true,
    skipLibCheck: true,
    allowJs: true,
    checkJs: true,
    noEmit: true,
    // A Next.js app imports its modules by their .ts name (examples/nextjs), as Next.js resolves them.
    allowImportingTsExtensions: true,
    // NestJS apps compile with legacy decorators (the README's NestJS section uses them).
    experimentalDecorators: true,
  },
};
// The same options for the compiler API, converted rather than written twice.
const { options: compilerOptions, errors: optionErrors } = ts.convertCompilerOptionsFromJson(tsconfigJson.compilerOptions, root);
if (optionErrors.length > 0) throw new Error(`check-snippets: bad compiler options: ${optionErrors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`);

/** Fenced ts/js blocks of one markdown file, with the directives in the comment lines right above each. */
function extractBlocks(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  const problems = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const start = i;
    const body = [];
    for (i++; i < lines.length; i++) {
      const line = lines[i];
      if (line.trimStart().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '' && line.trim().length >= fence.length) break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const language = LANGUAGES[info.toLowerCase()];
    // Directives: the comment lines directly above the fence (no blank line between).
    const directives = [];
    for (let j = start - 1; j >= 0; j--) {
      const text = lines[j].trim();
      if (!text.startsWith('<!--')) break;
      const match = DIRECTIVE.exec(text);
      if (match) directives.push({ name: match[1], value: match[2], line: j + 1 });
      else if (/^<!--\s*snippet/.test(text))
        problems.push(`${rel(file)}:${j + 1}: malformed directive ${text} (want <!-- snippet: skip --> or <!-- snippet-preamble: NAME -->)`);
    }
    if (!language) continue;
    const block = { file, line: start + 1, language, code: body.join('\n') + '\n', skip: false, preambles: [] };
    for (const directive of directives) {
      const where = `${rel(file)}:${directive.line}`;
      if (directive.name === 'snippet' && /^skip\b/.test(directive.value)) block.skip = true;
      else if (directive.name === 'snippet-preamble') {
        for (const name of directive.value.split(/\s*,\s*/).filter(Boolean)) {
          if (!existsSync(join(preambleDir, name))) problems.push(`${where}: no preamble folder ${rel(join(preambleDir, name))}`);
          else block.preambles.push(name);
        }
      } else problems.push(`${where}: unknown directive <!-- ${directive.name}: ${directive.value} --> (use "snippet: skip" or "snippet-preamble: NAME")`);
    }
    blocks.push(block);
  }
  return { blocks, problems };
}

// One compiler host for every program: the declarations of node_modules and dist are parsed once.
const host = ts.createCompilerHost(compilerOptions);
const sourceFiles = new Map();
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
  if (fileName.startsWith(outDir)) return getSourceFile(fileName, languageVersion, onError, shouldCreate);
  const key = `${fileName}|${typeof languageVersion === 'object' ? languageVersion.impliedNodeFormat : ''}`;
  if (!sourceFiles.has(key)) sourceFiles.set(key, getSourceFile(fileName, languageVersion, onError, shouldCreate));
  return sourceFiles.get(key);
};

/** Type-checks one program; returns its diagnostics, each mapped by `locate` to a place a reader can find. */
function check(rootNames, locate) {
  const program = ts.createProgram({ rootNames, options: compilerOptions, host });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n    ');
    if (!diagnostic.file || diagnostic.start === undefined) return `error TS${diagnostic.code}: ${message}`;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const source = diagnostic.file.text.split('\n')[line]?.trim() ?? '';
    return `${locate(diagnostic.file.fileName, line, character)}: error TS${diagnostic.code}: ${message}\n      | ${source}`;
  });
}

function filesOf(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesOf(join(dir, entry.name)) : [join(dir, entry.name)]));
}

// --- main ---

if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
  console.error('check-snippets: dist/ is missing: run `npm run build` first (snippets import waitgate through its exports map).');
  process.exit(2);
}
const built = statSync(join(root, 'dist', 'index.d.ts')).mtimeMs;
const newer = filesOf(join(root, 'src')).filter((file) => statSync(file).mtimeMs > built);
if (newer.length > 0) console.warn(`check-snippets: warning: ${rel(newer[0])} is newer than dist/: run \`npm run build\` for current types.`);

const markdown =
  process.argv.length > 2
    ? process.argv.slice(2).map((file) => join(process.cwd(), file))
    : [
        join(root, 'README.md'),
        ...readdirSync(join(root, 'docs'))
          .filter((f) => f.endsWith('.md'))
          .sort()
          .map((f) => join(root, 'docs', f)),
      ];

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

let checked = 0;
let skipped = 0;
const failures = [];

for (const file of markdown) {
  const { blocks, problems } = extractBlocks(file);
  failures.push(...problems);
  for (const block of blocks) {
    const where = `${rel(file)}:${block.line}`;
    if (block.skip) {
      skipped++;
      continue;
    }
    checked++;
    const dir = join(outDir, `${basename(file, '.md')}-L${block.line}`);
    mkdirSync(dir, { recursive: true });
    const snippet = join(dir, block.language === 'ts' ? 'snippet.mts' : 'snippet.mjs');
    writeFileSync(snippet, block.code);
    const copied = new Map(); // path beside the snippet -> its preamble source
    for (const name of block.preambles) {
      for (const source of filesOf(join(preambleDir, name))) {
        const target = join(dir, relative(join(preambleDir, name), source));
        mkdirSync(dirname(target), { recursive: true });
        copyFileSync(source, target);
        copied.set(target, source);
      }
    }
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ ...tsconfigJson, files: [snippet, ...copied.keys()].map((f) => relative(dir, f)) }, null, 2) + '\n',
    );
    const errors = check([snippet, ...[...copied.keys()].filter((f) => /\.[cm]?[jt]s$/.test(f))], (fileName, line, character) => {
      // The fence is on block.line, so line 0 of the snippet is block.line + 1 of the markdown.
      if (fileName === snippet) return `${rel(file)}:${block.line + 1 + line}:${character + 1}`;
      const preamble = copied.get(fileName);
      return `${rel(preamble ?? fileName)}:${line + 1}:${character + 1}`;
    });
    if (errors.length === 0) console.log(`ok    ${where} (${block.language})`);
    else {
      console.log(`FAIL  ${where} (${block.language}): the block starting on line ${block.line} does not compile`);
      failures.push(`${where}: the ${block.language} block starting on line ${block.line} does not compile (${rel(dir)}):\n  ${errors.join('\n  ')}`);
    }
  }
}

// The TypeScript examples: each folder under examples/ holding .ts files is one program.
for (const name of readdirSync(join(root, 'examples')).sort()) {
  const dir = join(root, 'examples', name);
  if (!statSync(dir).isDirectory()) continue;
  const files = filesOf(dir).filter((f) => /\.[cm]?ts$/.test(f) && !/node_modules|[/\\]\.next[/\\]|next-env\.d\.ts$/.test(f));
  if (files.length === 0) continue;
  checked++;
  const errors = check(files, (fileName, line, character) => `${rel(fileName)}:${line + 1}:${character + 1}`);
  if (errors.length === 0) console.log(`ok    ${rel(dir)}/ (ts)`);
  else {
    console.log(`FAIL  ${rel(dir)}/ (ts)`);
    failures.push(`${rel(dir)}/ does not compile:\n  ${errors.join('\n  ')}`);
  }
}

console.log(`\n${checked} checked, ${skipped} skipped (<!-- snippet: skip -->), ${failures.length} failed`);
if (failures.length > 0) {
  console.error(`\n${failures.join('\n\n')}`);
  process.exitCode = 1;
}
