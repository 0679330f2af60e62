import { describe, expect, it } from 'vitest';
import { budgetDurationMs, budgetWindow, scopeBudget, toMicros } from './budget-window.ts';

describe('budget windows', () => {
  it('reads Nd (1-365) and Nh (1-8760) and nothing else', () => {
    expect(budgetDurationMs('1d')).toBe(86_400_000);
    expect(budgetDurationMs('365d')).toBe(365 * 86_400_000);
    expect(budgetDurationMs('8760h')).toBe(8760 * 3_600_000);
    for (const bad of ['0d', '366d', '8761h', '1w', '01d', '1.5d', ' 1d', '', 'd', '1D'])
      expect(budgetDurationMs(bad), bad).toBeUndefined();
  });

  it('aligns windows to the epoch, so every replica agrees', () => {
    const day = 86_400_000;
    expect(budgetWindow(day, Date.parse('2026-11-23T12:00:00Z'))).toEqual({
      index: Math.floor(Date.parse('2026-11-23T00:00:00Z') / day),
      start: Date.parse('2026-11-23T00:00:00Z'),
      end: Date.parse('2026-11-24T00:00:00Z'),
    });
    expect(budgetWindow(7 * day, Date.parse('2026-11-23T12:00:00Z')).start).toBe(
      Date.parse('2026-11-19T00:00:00Z'),
    );
    expect(budgetWindow(0, 123)).toEqual({ index: 0, start: 0, end: null });
  });

  it('counts integer micro-USD and precomputes a scope budget', () => {
    expect(toMicros(0.1 + 0.2)).toBe(300_000);
    expect(toMicros(Number.NaN)).toBe(0);
    expect(toMicros(-1)).toBe(0);
    expect(scopeBudget({ max_budget: null, soft_budget: null, budget_duration: '1d' })).toBeNull();
    expect(scopeBudget({ max_budget: 10, soft_budget: null, budget_duration: null })).toEqual({
      maxMicros: 10_000_000,
      softMicros: null,
      durationMs: 0,
    });
  });
});
