import { describe, expect, it } from 'vitest';
import { hasTokenShape, newEntryToken, newEntryTokens } from '../src/tokens.js';

describe('entry tokens', () => {
  it('a batch read from one CSPRNG call gives tokens of the one shape, all distinct', () => {
    const batch = newEntryTokens(128);
    expect(batch).toHaveLength(128);
    expect(batch.every(hasTokenShape)).toBe(true);
    expect(new Set(batch).size).toBe(128);
    expect(hasTokenShape(newEntryToken())).toBe(true);
    expect(newEntryTokens(0)).toEqual([]);
  });
});
