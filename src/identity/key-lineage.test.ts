import { describe, expect, it } from 'vitest';
import { childLineage, LINEAGE_OVERFLOW, lineageOf, MAX_LINEAGE, peopleBehind } from './key-lineage.ts';

describe('key lineage (four-eyes along created_by, issue 25)', () => {
  it('puts the creator first, then the lineage of the key it used, each person once', () => {
    expect(childLineage('user:b', ['user:a'])).toEqual(['user:b', 'user:a']);
    // A chain that comes back to a person names them once: no cycle can grow a lineage.
    expect(childLineage('user:a', ['user:b', 'user:a'])).toEqual(['user:a', 'user:b']);
  });

  it('ends the chain at the master key', () => {
    expect(childLineage('master', ['user:a'])).toEqual([]);
  });

  it('marks a chain longer than its bound, and keeps the mark in every key created through it', () => {
    let lineage: string[] = [];
    for (let hop = 0; hop <= MAX_LINEAGE; hop++) lineage = childLineage(`user:u${hop}`, lineage);
    expect(lineage).toHaveLength(MAX_LINEAGE + 1);
    expect(lineage.at(-1)).toBe(LINEAGE_OVERFLOW);
    expect(childLineage('user:u0', lineage)).toContain(LINEAGE_OVERFLOW);
  });

  it('reads a key older than lineages as created by its recorded creator alone', () => {
    expect(lineageOf({ user_id: 'b', created_by: 'user:a', created_by_lineage: null })).toEqual(['user:a']);
    expect(lineageOf({ user_id: 'b', created_by: 'master', created_by_lineage: null })).toEqual([]);
    expect(lineageOf({ user_id: 'b', created_by: null, created_by_lineage: null })).toEqual([]);
    // A stored lineage that is not a list of labels falls back the same way.
    const broken = { user_id: 'b', created_by: 'user:a', created_by_lineage: [3] as unknown as string[] };
    expect(lineageOf(broken)).toEqual(['user:a']);
  });

  it('counts the owner of a key among the people behind it', () => {
    expect([...peopleBehind('b', ['user:a'])].sort()).toEqual(['user:a', 'user:b']);
    expect([...peopleBehind(null, [])]).toEqual([]);
  });
});
