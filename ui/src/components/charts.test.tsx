import { describe, expect, it } from 'vitest';
import { formatBucketTime } from './charts.tsx';

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
