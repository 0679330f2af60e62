import { describe, expect, it } from 'vitest';
import { dayAfter, type FilterSpec, readFilters, writeFilters } from './url-filters.ts';

const specs: ReadonlyArray<FilterSpec<'model' | 'group_by'>> = [
  { name: 'model', label: 'Model', kind: 'text' },
  { name: 'group_by', label: 'Group by', kind: 'select', defaultValue: 'day' },
];

describe('filters kept in the URL', () => {
  it('reads an absent parameter as its default, and writes neither empty nor default values', () => {
    const values = readFilters(new URLSearchParams('other=1'), specs);
    expect(values).toEqual({ model: '', group_by: 'day' });
    expect(writeFilters(values, specs).toString()).toBe('');
    expect(writeFilters({ model: ' gpt-4o ', group_by: 'model' }, specs).toString()).toBe(
      'model=gpt-4o&group_by=model',
    );
  });
});

describe('dayAfter (an inclusive last day as an exclusive end)', () => {
  it('crosses month, year and leap-day boundaries in UTC', () => {
    expect(dayAfter('2026-11-24')).toBe('2026-11-25');
    expect(dayAfter('2026-11-30')).toBe('2026-12-01');
    expect(dayAfter('2026-12-31')).toBe('2027-01-01');
    expect(dayAfter('2028-02-28')).toBe('2028-02-29');
  });

  it('passes anything but a day through unchanged, for the gateway to refuse by name', () => {
    expect(dayAfter('yesterday')).toBe('yesterday');
    expect(dayAfter('2026-13-45')).toBe('2026-13-45');
    expect(dayAfter('2026-02-30')).toBe('2026-02-30');
  });
});
