// ESLint 9 flat config: ESLint's and typescript-eslint's recommended rules, plus three
// type-aware rules about promises on the TypeScript sources (a dropped promise is a lost
// error in a queue). Formatting is Prettier's job.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'dist/',
      'coverage/',
      'docs/public/api/',
      'docs/.vitepress/cache/',
      'docs/.vitepress/dist/',
      'examples/nextjs/.next/',
      'examples/nextjs/next-env.d.ts',
      '.artifacts/',
      'node_modules/',
      'src/store/lua.generated.ts',
      'src/dashboard/assets.generated.ts',
      'src/room/assets.generated.ts',
      'bench/results/',
    ],
  },
  {
    files: ['**/*.{ts,mts,cts,js,mjs,cjs}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // `_`-prefixed names are deliberately unused (a skipped tuple slot, a required parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // `let x; ... callback reads x; ... x = ...` (a closure that must see the later value) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Type-aware, so these need the TypeScript program (tsconfig.json); only the promise
    // rules, which cost a few seconds and catch what the syntax-only rules cannot.
    files: ['**/*.{ts,mts,cts}'],
    // docs/.vitepress/config.mts is the site's config, outside the TypeScript program.
    ignores: ['test/types/cases/**', 'docs/.vitepress/**'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Type tests: parameters that exist to be inspected with `typeof`.
    files: ['test/types/cases/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The example shop's page runs in the browser.
    files: ['examples/**/public/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The dashboard's page script runs in the browser (inlined by scripts/build-dashboard-assets.mjs).
    files: ['src/dashboard/page/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } },
  },
);
