// The Lua scripts obey their own conventions: name-N.lua with N keys, a header
// documenting every key and argument, read-only scripts flagged no-writes.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scripts } from '../../src/store/lua.generated.js';
import { checkKeyNames } from '../support/lua-keys.js';

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
      // Every key argument is KEYS[n], or a helper's parameter that its callers fill with KEYS[n].
      const keys = checkKeyNames(script.lua, script.numberOfKeys);
      expect(keys.violations).toEqual([]);
      expect(keys.calls).toBeGreaterThan(0);
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

  describe('the key-name check (checkKeyNames) itself', () => {
    const helper = "local function readField(key, field) return redis.call('HGET', key, field) end\n";
    // Known-bad scripts, each with what it must be reported for. The former check (a regex for `redis.call('X', ARGV`) caught none of them.
    const bad: Array<[string, string, string]> = [
      ['a key concatenated onto KEYS[1]', "return redis.call('HGET', KEYS[1] .. ':x', ARGV[1])", "HGET: key argument `KEYS [ 1 ] .. ':x'` is not KEYS[n]"],
      ['a key from ARGV, through pcall', "return redis.pcall('GET', ARGV[1])", 'GET: key argument `ARGV [ 1 ]` is not KEYS[n]'],
      ['a literal key', "return redis.call('DEL', '{waitgate:q}:tokens')", "DEL: key argument `'{waitgate:q}:tokens'` is not KEYS[n]"],
      ['a key built with string.format', "return redis.call('HGET', string.format('%s:x', KEYS[1]), 'f')", 'HGET: key argument `string . format'],
      ['a later key of a multi-key command', "return redis.call('DEL', KEYS[1], KEYS[1] .. ':old')", "DEL: key argument `KEYS [ 1 ] .. ':old'`"],
      ['a key built into a local first', "local k = KEYS[1] .. ':x'\nreturn redis.call('HGET', k, 'f')", 'HGET: key argument `k` is not KEYS[n]'],
      ['a helper called with a built key', `${helper}return readField(KEYS[1] .. ':x', 'f')`, "via readField(key): key argument `KEYS [ 1 ] .. ':x'`"],
      [
        'a helper fed ARGV through another helper',
        `${helper}local function outer(k) return readField(k, 'f') end\nreturn outer(ARGV[1])`,
        'via readField(key) via outer(k): key argument `ARGV [ 1 ]`',
      ],
      [
        'a helper that rebuilds its key parameter',
        "local function f(key) key = key .. ':x' return redis.call('GET', key) end\nreturn f(KEYS[1])",
        'the parameter is assigned inside the function',
      ],
      ['a helper passed around as a value', `${helper}local t = { readField }\nreturn readField(KEYS[1], 'f')`, 'readField is used as a value'],
      ['KEYS beyond the declared count', "return redis.call('GET', KEYS[3])", 'KEYS[3] is not one of KEYS[1..2]'],
      ['a command name that is not a literal', 'return redis.call(ARGV[1], KEYS[1])', 'command that is not a string literal'],
      ['redis.call aliased', "local call = redis.call\nreturn call('GET', ARGV[1])", 'redis.call used other than in a direct call'],
      ['a command the checker does not know', "return redis.call('SUNIONSTORE', KEYS[1], KEYS[2])", 'SUNIONSTORE: unknown command'],
    ];
    it.each(bad)('reports %s', (_label, lua, why) => {
      const { violations } = checkKeyNames(lua, 2);
      expect(violations).toHaveLength(1);
      expect(violations[0]).toContain(why);
    });

    it.each(Object.keys(scripts))('reports %s changed to build one key name, directly or through a helper', (name) => {
      const { lua, numberOfKeys } = scripts[name as keyof typeof scripts];
      const broken: string[] = [];
      const direct = /redis\.p?call\('[A-Z]+', KEYS\[\d+\]/.exec(lua)?.[0]; // e.g. redis.call('HGET', KEYS[1]
      if (direct) broken.push(lua.replace(direct, `${direct} .. ':x'`));
      const helperCall = /\b(?!call\b|pcall\b)[A-Za-z]+\(KEYS\[\d+\]/.exec(lua)?.[0]; // e.g. checkGeneration(KEYS[4]
      if (helperCall) broken.push(lua.replace(helperCall, helperCall.replace(/KEYS\[\d+\]/, 'ARGV[1]')));
      expect(broken.length).toBeGreaterThan(0);
      for (const script of broken) {
        expect(script).not.toBe(lua);
        expect(checkKeyNames(script, numberOfKeys).violations).toEqual([expect.stringContaining('is not KEYS[n]')]);
      }
    });

    it('accepts KEYS[n] passed directly or through helpers, and ignores comments and strings', () => {
      const good = [
        '#!lua flags=no-writes',
        "--[[ a header may say redis.call('GET', ARGV[1]) ]]",
        "-- so may a comment: redis.call('HGET', KEYS[1] .. ':x')",
        helper,
        'local function outer(k, f) return readField(k, f) end',
        "local t = redis.call('TIME')",
        'local note = "redis.call(\'GET\', ARGV[1])"',
        "if readField(KEYS[1], 'a') then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end",
        "for i = 1, 2 do redis.call('ZADD', KEYS[2], i, 'm' .. i) end",
        "return { outer(KEYS[2], 'b'), redis.pcall('ZRANGE', KEYS[1], 0, -1), redis.call('DEL', KEYS[1], KEYS[2]) }",
      ].join('\n');
      expect(checkKeyNames(good, 2)).toEqual({ calls: 6, violations: [] });
    });
  });
});
