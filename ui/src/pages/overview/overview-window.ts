/** The overview's time windows: the values the API takes, their labels, and reading one from the URL. */
import type { OverviewWindow } from '../../api/console-types.ts';

export const overviewWindows: ReadonlyArray<{ value: OverviewWindow; label: string; phrase: string }> = [
  { value: '1h', label: 'Last hour', phrase: 'the last hour' },
  { value: '24h', label: 'Last 24 hours', phrase: 'the last 24 hours' },
  { value: '7d', label: 'Last 7 days', phrase: 'the last 7 days' },
  { value: '30d', label: 'Last 30 days', phrase: 'the last 30 days' },
];

/** The API's default, used when the URL names no window or one it does not know. */
export const DEFAULT_WINDOW: OverviewWindow = '24h';

export function parseWindow(text: string | null): OverviewWindow {
  return overviewWindows.find((window) => window.value === text)?.value ?? DEFAULT_WINDOW;
}

export function windowPhrase(window: OverviewWindow): string {
  return overviewWindows.find((candidate) => candidate.value === window)?.phrase ?? window;
}
