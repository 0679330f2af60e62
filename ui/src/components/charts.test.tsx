import { describe, expect, it } from 'vitest';
import { chartColors, formatBucketTime } from './charts.tsx';

// Expectations are built from the same instant in the test machine's local time zone.
const at = new Date('2026-11-24T13:05:00Z');
const localTime = at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
const localDay = at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short' });

describe('formatBucketTime', () => {
  it('shows only the time when the window is a day or less', () => {
    expect(formatBucketTime(at.toISOString(), 60, 3600)).toBe(localTime);
    expect(formatBucketTime(at.toISOString(), 3600, 86_400)).toBe(localTime);
  });

  it('adds the day when the window spans days, and shows only the day for whole-day buckets', () => {
    expect(formatBucketTime(at.toISOString(), 21_600, 7 * 86_400)).toBe(`${localDay} ${localTime}`);
    expect(formatBucketTime(at.toISOString(), 86_400, 30 * 86_400)).toBe(localDay);
  });

  it('leaves text that is not a time as it is', () => {
    expect(formatBucketTime('gpt-4o', 60, 3600)).toBe('gpt-4o');
  });
});

/** WCAG 2 contrast ratio of a #rrggbb colour against white. */
function contrastWithWhite(hex: string): number {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return 1.05 / (luminance + 0.05);
}

describe('chart colours', () => {
  it.each(Object.entries(chartColors))('%s (%s) has at least 3:1 contrast against white', (_name, hex) => {
    expect(contrastWithWhite(hex)).toBeGreaterThanOrEqual(3);
  });
});
