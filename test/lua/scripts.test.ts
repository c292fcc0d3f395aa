// The Lua scripts obey their own conventions: name-N.lua with N keys, a header
// documenting every key and argument, read-only scripts flagged no-writes.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scripts } from '../../src/store/lua.generated.js';

const luaDir = join(import.meta.dirname, '..', '..', 'lua');
const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
const WRITE_COMMANDS = /redis\.call\('(SET|HSET|HDEL|DEL|ZADD|ZREM|ZPOPMIN|ZREMRANGEBYSCORE|HINCRBY|INCR|EXPIRE|PEXPIRE)'/;

describe('lua scripts', () => {
  it('has one generated entry per file', () => {
    expect(Object.keys(scripts).sort()).toEqual(files.map((f) => f.replace(/-\d+\.lua$/, '')).sort());
  });

  describe.each(files)('%s', (file) => {
    const source = readFileSync(join(luaDir, file), 'utf8');
    const script = scripts[file.replace(/-\d+\.lua$/, '') as keyof typeof scripts];
    const declared = Number(/-(\d+)\.lua$/.exec(file)![1]);

    it('uses exactly KEYS[1..N] where N is in its name, each documented in the header', () => {
      const used = [...script.lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(...used)).toBe(declared);
      expect(script.numberOfKeys).toBe(declared);
      const header = /--\[\[([\s\S]*?)\]\]/.exec(source)![1]!;
      for (let i = 1; i <= declared; i++) expect(header).toContain(`KEYS[${i}]`);
    });

    it('never scans or lists keys, never builds key names, and takes time only from TIME', () => {
      expect(script.lua).not.toMatch(/redis\.call\('(KEYS|SCAN)'/);
      expect(script.lua).not.toMatch(/redis\.call\('[A-Z]+',\s*ARGV/);
      expect(script.lua).not.toMatch(/os\.(time|clock)/);
    });

    it(script.readOnly ? 'declares no-writes and writes nothing' : 'is not flagged read-only', () => {
      // Its own body and the helpers it includes (Redis also refuses a write from a no-writes script).
      const included = [...source.matchAll(/^--- @include "(\w+)"$/gm)].map((m) => readFileSync(join(luaDir, 'includes', `${m[1]}.lua`), 'utf8'));
      if (script.readOnly) {
        expect(source.startsWith('#!lua flags=no-writes\n')).toBe(true);
        for (const text of [source, ...included]) expect(text).not.toMatch(WRITE_COMMANDS);
      } else {
        expect(script.lua).toMatch(WRITE_COMMANDS);
      }
    });

    it('has a shebang, so Redis refuses it whole when out of memory and refuses undeclared keys', () => {
      // A script without flags is checked for OOM only at its first growing write, after
      // earlier writes (e.g. ZPOPMIN) already happened; a flagged one is refused before it runs.
      // consume, release and leave may run out of memory (allow-oom): they free what they touch.
      expect(source).toMatch(script.readOnly ? /^#!lua flags=no-writes\n/ : /^#!lua( flags=allow-oom)?\n/);
    });

  });

  describe.each(files.filter((f) => !scripts[f.replace(/-\d+\.lua$/, '') as keyof typeof scripts].readOnly))('%s (mutating)', (file) => {
    // The script's own body: included helpers are function definitions that run only when called.
    const source = readFileSync(join(luaDir, file), 'utf8');

    it('validates its arguments before the first write (Redis keeps the writes of a script that errors half-way)', () => {
      const firstWrite = source.search(/redis\.call\('(SET|HSET|HDEL|DEL|ZADD|ZREM|ZPOPMIN|ZREMRANGEBYSCORE|HINCRBY)'|newGeneration\(/);
      const validation = source.search(/error_reply/);
      expect(validation).toBeGreaterThan(-1);
      expect(validation).toBeLessThan(firstWrite);
    });
  });
});
