#!/usr/bin/env node
// The `waitgate` command (package.json bin): operator tools for a running queue. See docs/cli.md.

import { main } from './main.js';

void main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }).then((code) => {
  // Exit once the output is flushed: an ioredis client closing in the background must not hold the process.
  process.stdout.write('', () => process.exit(code));
});
