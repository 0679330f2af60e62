import { describe, expect, it } from 'vitest';
import { createToolAliases } from './mcp-tool-aliases.ts';

const valid = /^[a-zA-Z0-9_-]{1,64}$/;

describe('MCP tool aliases', () => {
  it('gives readable aliases that satisfy provider function-name rules and map back', () => {
    const aliases = createToolAliases(['github.create_issue', 'fs.read-file']);
    expect(aliases.aliasOf('github.create_issue')).toBe('github__create_issue');
    expect(aliases.nameOf('github__create_issue')).toBe('github.create_issue');
    expect(aliases.nameOf('fs__read-file')).toBe('fs.read-file');
    expect(aliases.nameOf('unknown')).toBeUndefined();
  });

  it('keeps aliases unique when names collide after cleaning, or collide with the caller’s own tools', () => {
    const names = ['s.a b', 's.a/b', 's.a_b', 's.a__b'];
    const aliases = createToolAliases(names, ['s__a_b']);
    const all = names.map((name) => aliases.aliasOf(name));
    expect(new Set(all).size).toBe(names.length);
    expect(all).not.toContain('s__a_b');
    for (const [index, alias] of all.entries()) {
      expect(alias).toMatch(valid);
      expect(aliases.nameOf(alias)).toBe(names[index]);
    }
  });

  it('shortens long names to 64 characters without losing uniqueness', () => {
    const long = ['server.' + 'x'.repeat(100), 'server.' + 'x'.repeat(101), 'server.' + 'ü'.repeat(70)];
    const aliases = createToolAliases(long);
    const all = long.map((name) => aliases.aliasOf(name));
    expect(new Set(all).size).toBe(3);
    for (const alias of all) expect(alias).toMatch(valid);
  });
});
