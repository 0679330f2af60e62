import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubResizeObserver } from '../test-support/render-console.tsx';
import { ChartFigure, chartColors, formatBucketTime } from './charts.tsx';

// The gateway cuts buckets on UTC boundaries, so their labels are UTC whatever the browser's zone:
// the test runs in New York (UTC-5 in November), where a local-time label would differ.
process.env.TZ = 'America/New_York';

const at = '2026-11-24T13:05:00.000Z';
// 02:00 UTC on the 25th is still the 24th in New York.
const afterUtcMidnight = '2026-11-25T02:00:00.000Z';

describe('formatBucketTime', () => {
  it('runs in a zone other than UTC (else the tests below would prove nothing)', () => {
    expect(new Date(at).getHours()).toBe(8);
    expect(new Date(afterUtcMidnight).getDate()).toBe(24);
  });

  it('shows only the UTC time when the window is a day or less', () => {
    expect(formatBucketTime(at, 60, 3600)).toBe('13:05');
    expect(formatBucketTime(afterUtcMidnight, 3600, 86_400)).toBe('02:00');
  });

  it('adds the UTC day when the window spans days, and shows only the day for whole-day buckets', () => {
    expect(formatBucketTime(at, 21_600, 7 * 86_400)).toBe('24 Nov 13:05');
    expect(formatBucketTime(afterUtcMidnight, 21_600, 7 * 86_400)).toBe('25 Nov 02:00');
    expect(formatBucketTime(afterUtcMidnight, 86_400, 30 * 86_400)).toBe('25 Nov');
  });

  it('leaves text that is not a time as it is', () => {
    expect(formatBucketTime('gpt-4o', 60, 3600)).toBe('gpt-4o');
  });
});

describe('ChartFigure', () => {
  it("names the x values' unit in its table header, next to the UTC labels", () => {
    stubResizeObserver();
    render(
      <ChartFigure<{ start: string; requests: number }>
        title="Requests"
        summary="Requests per hour."
        kind="line"
        data={[{ start: afterUtcMidnight, requests: 3 }]}
        xKey="start"
        xLabel="Time"
        xUnit="UTC"
        xFormat={(start) => formatBucketTime(start, 3600, 7 * 86_400)}
        series={[{ key: 'requests', label: 'Requests', color: chartColors.blue }]}
      />,
    );
    const table = screen.getByRole('table', { name: 'Requests (data)' });
    expect(within(table).getByRole('columnheader', { name: 'Time (UTC)' })).toBeTruthy();
    expect(within(table).getByRole('rowheader').textContent).toBe('25 Nov 02:00');
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
