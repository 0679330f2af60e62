import { focusManager } from '@tanstack/react-query';
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OverviewAnswer } from '../api/console-types.ts';
import { apiError, fakeGateway } from '../test-support/fake-gateway.ts';
import { orgAdminActor, renderConsole, TEST_ADMIN_KEY } from '../test-support/render-console.tsx';
import { OVERVIEW_REFRESH_MS, OverviewPage } from './overview-page.tsx';

const OVERVIEW = '/ui/api/console/overview';

// Buckets are cut on UTC boundaries and labelled in UTC: a browser in New York (UTC-5) must still
// read 08:00 for the bucket that starts at 08:00Z.
process.env.TZ = 'America/New_York';

function busyAnswer(window: OverviewAnswer['window'] = '24h'): OverviewAnswer {
  return {
    window,
    from: '2026-11-24T10:00:00.000Z',
    to: '2026-11-25T10:00:00.000Z',
    bucket_seconds: 3600,
    totals: {
      requests: 1234,
      errors: 37,
      prompt_tokens: 50_000,
      completion_tokens: 12_345,
      total_tokens: 62_345,
      spend: 4.5678,
      latency_p50_ms: 412,
      latency_p99_ms: 2350,
      fallbacks: 9,
    },
    series: [
      {
        start: '2026-11-25T08:00:00.000Z',
        requests: 734,
        errors: 30,
        prompt_tokens: 30_000,
        completion_tokens: 7000,
        spend: 2.5,
        latency_p50_ms: 400,
        latency_p99_ms: 2100,
      },
      {
        start: '2026-11-25T09:00:00.000Z',
        requests: 500,
        errors: 7,
        prompt_tokens: 20_000,
        completion_tokens: 5345,
        spend: 2.0678,
        latency_p50_ms: 430,
        latency_p99_ms: 2600,
      },
    ],
    top_models: [{ model: 'gpt-4o-mini', requests: 1000, total_tokens: 50_000, spend: 3.25 }],
    top_keys: [{ key_id: 'key_abc', key_name: 'checkout-service', requests: 900, spend: 3.1 }],
    top_teams: [{ team_id: 'team_1', team_alias: 'Payments', requests: 800, spend: 2.9 }],
    rejections: {
      window_seconds: 3600,
      rate_limit: 14,
      budget: 3,
      series: [{ start: '2026-11-25T09:59:00.000Z', rate_limit: 14, budget: 3 }],
    },
  };
}

function emptyAnswer(): OverviewAnswer {
  const answer = busyAnswer();
  return {
    ...answer,
    totals: {
      requests: 0,
      errors: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      spend: 0,
      latency_p50_ms: null,
      latency_p99_ms: null,
      fallbacks: 0,
    },
    series: answer.series.map((bucket) => ({
      ...bucket,
      requests: 0,
      errors: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      spend: 0,
      latency_p50_ms: null,
      latency_p99_ms: null,
    })),
    top_models: [],
    top_keys: [],
    top_teams: [],
    rejections: { window_seconds: 3600, rate_limit: 0, budget: 0, series: [] },
  };
}

function card(label: string): HTMLElement {
  return screen.getByRole('region', { name: label });
}

afterEach(() => {
  vi.useRealTimers();
  focusManager.setFocused(undefined);
});

describe('Overview page', () => {
  it('shows each total in the card named by its label, with the error rate', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    await screen.findByRole('region', { name: 'Requests' });
    expect(card('Requests')?.textContent).toContain('1,234');
    expect(card('Errors')?.textContent).toContain('37');
    expect(card('Errors')?.textContent).toContain('3.0% of requests');
    expect(card('Latency p50')?.textContent).toContain('412 ms');
    expect(card('Latency p99')?.textContent).toContain('2.35 s');
    expect(card('Tokens')?.textContent).toContain('62,345');
    expect(card('Spend')?.textContent).toContain('$4.57');
    expect(card('Spend')?.textContent).toContain('exactly $4.5678');
    expect(card('Rate-limit rejections')?.textContent).toContain('14');
    expect(card('Budget rejections')?.textContent).toContain('3');
    expect(card('Fallbacks')?.textContent).toContain('9');
    expect(gateway.to(OVERVIEW)[0]?.headers.authorization).toBe(`Bearer ${TEST_ADMIN_KEY}`);
  });

  it('shows the other figures and says the refusal counts are unavailable when the gateway sends none (Redis down)', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => ({ ...busyAnswer(), rejections: null }) });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    await screen.findByRole('region', { name: 'Requests' });
    expect(card('Requests')?.textContent).toContain('1,234');
    expect(card('Rate-limit rejections')?.textContent).toContain('—');
    expect(card('Budget rejections')?.textContent).toContain('the shared store (Redis) is unreachable');
    expect(screen.queryByRole('table', { name: 'Rejections per minute (data)' })).toBeNull();
  });

  it("gives every chart a heading and a table of the chart's numbers for screen readers", async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    for (const title of ['Requests and errors', 'Latency', 'Tokens', 'Spend'])
      expect((await screen.findByRole('heading', { name: title, level: 2 })).tagName).toBe('H2');
    const requests = screen.getByRole('table', { name: 'Requests and errors (data)' });
    const rows = within(requests).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]?.textContent).toContain('734');
    expect(rows[1]?.textContent).toContain('30');
    const latency = screen.getByRole('table', { name: 'Latency (data)' });
    expect(within(latency).getAllByRole('row')[2]?.textContent).toContain('2.60 s');
    const spend = screen.getByRole('table', { name: 'Spend (data)' });
    expect(within(spend).getAllByRole('row')[2]?.textContent).toContain('$2.0678');
    const rejections = screen.getByRole('table', { name: 'Rejections per minute (data)' });
    expect(within(rejections).getAllByRole('row')[1]?.textContent).toContain('14');
    expect(
      screen.getByRole('img', { name: /1,234 requests and 37 errors in the last 24 hours/ }),
    ).toBeTruthy();
  });

  it("labels the buckets in UTC and says so, whatever the browser's time zone", async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    const requests = await screen.findByRole('table', { name: 'Requests and errors (data)' });
    expect(within(requests).getByRole('columnheader', { name: 'Time (UTC)' })).toBeTruthy();
    expect(
      within(requests)
        .getAllByRole('rowheader')
        .map((cell) => cell.textContent),
    ).toEqual(['08:00', '09:00']);
    expect(screen.getByRole('img', { name: /busiest at 08:00 UTC with 734/ })).toBeTruthy();
    const rejections = screen.getByRole('table', { name: 'Rejections per minute (data)' });
    expect(within(rejections).getByRole('columnheader', { name: 'Minute (UTC)' })).toBeTruthy();
    expect(within(rejections).getByRole('rowheader').textContent).toBe('09:59');
  });

  it('lists the top models, keys and teams', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    const models = await screen.findByRole('table', { name: 'Top models' });
    expect(within(models).getByRole('row', { name: /gpt-4o-mini/ })?.textContent).toContain('$3.25');
    const keys = screen.getByRole('table', { name: 'Top keys' });
    expect(within(keys).getByRole('row', { name: /checkout-service/ })?.textContent).toContain('key_abc');
    const teams = screen.getByRole('table', { name: 'Top teams' });
    expect(within(teams).getByRole('row', { name: /Payments/ })?.textContent).toContain('800');
  });

  it('"Show as table" shows a chart\'s numbers instead of the picture', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    const figure = await screen.findByRole('figure', { name: 'Latency' });

    await userEvent.click(within(figure).getByRole('button', { name: 'Show as table' }));

    expect(within(figure).queryByRole('img')).toBeNull();
    expect(within(figure).getByRole('table').parentElement?.className).toBe('chart-table');
    expect(within(figure).getByRole('button', { name: 'Show as chart' }).getAttribute('aria-expanded')).toBe(
      'true',
    );
  });

  it('asks for the window named in the URL and keeps a newly chosen one there (?window=7d)', async () => {
    const gateway = fakeGateway({
      [OVERVIEW]: (request) => busyAnswer(request.query.get('window') as OverviewAnswer['window']),
    });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch, path: '/?window=1h' });
    await screen.findByRole('region', { name: 'Requests' });
    expect(gateway.to(OVERVIEW)[0]?.query.get('window')).toBe('1h');
    expect((screen.getByLabelText('Time window') as HTMLSelectElement).value).toBe('1h');

    await userEvent.selectOptions(screen.getByLabelText('Time window'), 'Last 7 days');

    await waitFor(() => expect(gateway.to(OVERVIEW).at(-1)?.query.get('window')).toBe('7d'));
    expect(screen.getByTestId('location')?.textContent).toContain('/?window=7d');
  });

  it('asks for the last 24 hours when the URL names no window or an unknown one', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch, path: '/?window=1y' });
    await screen.findByRole('region', { name: 'Requests' });
    expect(gateway.to(OVERVIEW)[0]?.query.get('window')).toBe('24h');
  });

  it('says it is loading until the first answer arrives', async () => {
    let answer = (_: OverviewAnswer) => {};
    const gateway = fakeGateway({
      [OVERVIEW]: () =>
        new Promise<OverviewAnswer>((resolve) => {
          answer = resolve;
        }),
    });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    expect((await screen.findByRole('status')).textContent).toContain('Loading the overview…');
    act(() => answer(busyAnswer()));
    expect((await screen.findByRole('region', { name: 'Requests' })).textContent).toContain('1,234');
    expect(screen.queryByText(/Loading the overview/)).toBeNull();
  });

  it('says what to do next when the window has no requests', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => emptyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    expect((await screen.findByText('No requests in this window yet.')).className).toBe('empty-title');
    expect(screen.getByRole('link', { name: 'Keys & identities' }).getAttribute('href')).toBe(
      '/identities/keys',
    );
    expect(screen.getByText('/v1/chat/completions').tagName).toBe('CODE');
    expect(screen.queryByRole('table', { name: 'Top models' })).toBeNull();
    expect(card('Latency p50')?.textContent).toContain('—');
  });

  it('shows a failed load with "Try again", which asks again and then shows the numbers', async () => {
    let calls = 0;
    const gateway = fakeGateway({
      [OVERVIEW]: () => (++calls === 1 ? apiError(503, 'The spend store is unavailable.') : busyAnswer()),
    });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });

    const alert = await screen.findByRole('alert');
    expect(alert?.textContent).toContain('The spend store is unavailable.');
    await userEvent.click(within(alert).getByRole('button', { name: 'Try again' }));

    expect((await screen.findByRole('region', { name: 'Requests' })).textContent).toContain('1,234');
    expect(gateway.to(OVERVIEW)).toHaveLength(2);
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('keeps the last numbers under an alert when a refresh fails', async () => {
    let calls = 0;
    const gateway = fakeGateway({
      [OVERVIEW]: () => (++calls === 1 ? busyAnswer() : apiError(503, 'The spend store is unavailable.')),
    });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    await screen.findByRole('region', { name: 'Requests' });

    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));

    expect((await screen.findByRole('alert')).textContent).toContain('The spend store is unavailable.');
    expect(card('Requests').textContent).toContain('1,234');
  });

  it('"Refresh" asks the gateway again and shows when the numbers were updated', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    await screen.findByText(/^Updated/);

    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));

    await waitFor(() => expect(gateway.to(OVERVIEW)).toHaveLength(2));
  });

  /** The first answer at once; every later one waits for `release`. Resolves once the figures show. */
  async function overviewWithHeldSecondAnswer() {
    let answered = false;
    let release: () => void = () => {};
    const gateway = fakeGateway({
      [OVERVIEW]: () => {
        if (!answered) {
          answered = true;
          return busyAnswer();
        }
        return new Promise<OverviewAnswer>((resolve) => {
          release = () => resolve(busyAnswer());
        });
      },
    });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    await screen.findByRole('region', { name: 'Requests' });
    return { gateway, release: () => release() };
  }

  it('leaves Refresh enabled and focused while the 30 s poll runs (a poll is not the operator’s action)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { gateway, release } = await overviewWithHeldSecondAnswer();
    const refresh = screen.getByRole('button', { name: 'Refresh' }) as HTMLButtonElement;
    refresh.focus();

    act(() => vi.advanceTimersByTime(OVERVIEW_REFRESH_MS));
    await waitFor(() => expect(gateway.to(OVERVIEW)).toHaveLength(2));
    expect(refresh.disabled).toBe(false);
    expect(refresh.getAttribute('aria-disabled')).toBeNull();
    expect(refresh.textContent).toBe('Refresh');
    expect(document.activeElement).toBe(refresh);
    act(() => release());
    expect(document.activeElement).toBe(refresh);
  });

  it('marks Refresh busy while the refresh the operator pressed runs, keeping the focus on it', async () => {
    const { gateway, release } = await overviewWithHeldSecondAnswer();
    const refresh = screen.getByRole('button', { name: 'Refresh' });

    await userEvent.click(refresh);
    const busy = await screen.findByRole('button', { name: 'Refreshing…' });
    expect(busy.getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(busy);
    await userEvent.click(busy);
    expect(gateway.to(OVERVIEW)).toHaveLength(2);
    act(() => release());
    expect((await screen.findByRole('button', { name: 'Refresh' })).getAttribute('aria-disabled')).toBeNull();
  });

  it('refreshes every 30 s while the tab is visible, and not while it is hidden', async () => {
    // Only the refresh timer is faked: Testing Library's own waiting keeps real timeouts.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    await screen.findByRole('region', { name: 'Requests' });
    expect(OVERVIEW_REFRESH_MS).toBe(30_000);

    act(() => vi.advanceTimersByTime(OVERVIEW_REFRESH_MS));
    await waitFor(() => expect(gateway.to(OVERVIEW)).toHaveLength(2));

    act(() => focusManager.setFocused(false));
    act(() => vi.advanceTimersByTime(OVERVIEW_REFRESH_MS * 3));
    expect(gateway.to(OVERVIEW)).toHaveLength(2);
  });

  it('tells an organization administrator that only their organization is shown', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => busyAnswer() });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch, actor: orgAdminActor('org_acme') });

    expect((await screen.findByText('Showing organization org_acme only.')).tagName).toBe('P');
  });

  it('does not tell a proxy administrator that anything is narrowed', async () => {
    const gateway = fakeGateway({ [OVERVIEW]: () => ({ ...busyAnswer(), organization_id: null }) });
    renderConsole(<OverviewPage />, { fetch: gateway.fetch });
    await screen.findByRole('region', { name: 'Requests' });
    expect(screen.queryByText(/Showing organization/)).toBeNull();
  });
});
