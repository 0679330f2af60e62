import { describe, expect, it } from 'vitest';
import { jsonTextTooDeep, jsonValueTooDeep, MAX_JSON_DEPTH } from './json-depth.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON nesting bounds (issue 9: deep nesting took a model offline)', () => {
  it('accepts text nested exactly to the bound and refuses one level more', () => {
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTextTooDeep(`{"a":${nested(5_000)}}`)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ text: `${'['.repeat(500)} \\" ${'{'.repeat(500)}` });
    expect(jsonTextTooDeep(text)).toBe(false);
  });

  it('bounds parsed values the same way, without recursion', () => {
    expect(jsonValueTooDeep(JSON.parse(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonValueTooDeep(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonValueTooDeep(JSON.parse(nested(100_000)))).toBe(true);
    expect(jsonValueTooDeep({ a: [{ b: 1 }], c: 'x' }, 3)).toBe(false);
    expect(jsonValueTooDeep('scalar', 0)).toBe(false);
  });
});
