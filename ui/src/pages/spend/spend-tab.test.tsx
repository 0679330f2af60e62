import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiError, type FakeRoute, fakeGateway } from '../../test-support/fake-gateway.ts';
import { renderConsole, TEST_ADMIN_KEY } from '../../test-support/render-console.tsx';
import { SpendPage } from '../spend-page.tsx';
import { EXPORT_ROW_CAP } from './export-csv-button.tsx';
import type { SpendLogsAnswer, SpendRecord, SpendSummaryAnswer } from './spend-types.ts';

const SUMMARY = '/ui/api/spend/summary';
const LOGS = '/ui/api/spend/logs';
const EXPORT = '/ui/api/spend/logs/export';

function record(id: string, overrides: Partial<SpendRecord> = {}): SpendRecord {
  return {
    request_id: id,
    created_at: '2026-11-24T12:30:00.000Z',
    key_id: 'key_abc',
    user_id: null,
    team_id: 'team_pay',
    organization_id: null,
    model: 'gpt-4o-mini',
    model_group: 'gpt-4o-mini',
    deployment_id: 'dep-1',
    endpoint: 'chat',
    attempts: 1,
    stream: false,
    status: 200,
    usage_known: true,
    prompt_tokens: 120,
    completion_tokens: 30,
    total_tokens: 150,
    cost: 0.0012,
    latency_ms: 840,
    ttft_ms: null,
    cache_hit: false,
    ...overrides,
  };
}

function summary(request: { query: URLSearchParams }): SpendSummaryAnswer {
  const groupBy = (request.query.get('group_by') ?? 'day') as SpendSummaryAnswer['group_by'];
  const row = (group: string, cost: number) => ({
    group,
    requests: 10,
    failed_requests: 1,
    prompt_tokens: 1000,
    completion_tokens: 200,
    total_tokens: 1200,
    unknown_usage_requests: 0,
    cost,
  });
  const data =
    groupBy === 'day'
      ? [row('2026-11-23', 1.5), row('2026-11-24', 2.25)]
      : [row('gpt-4o-mini', 3.5), row('claude-haiku', 0.25)];
  return { object: 'list', group_by: groupBy, data, filters: {} };
}

/** Two pages of records: the first answers next_cursor "page-2", the second none. */
const pagedLogs: FakeRoute = (request): SpendLogsAnswer => {
  const second = request.query.get('cursor') === 'page-2';
  return {
    object: 'list',
    data: second
      ? [record('req-3', { status: 429, cost: null, usage_known: false, total_tokens: null })]
      : [record('req-1'), record('req-2')],
    next_cursor: second ? null : 'page-2',
    limit: 50,
    filters: {},
  };
};

const { createObjectURL, revokeObjectURL } = URL;
afterEach(() => {
  vi.restoreAllMocks();
  Object.assign(URL, { createObjectURL, revokeObjectURL });
});

describe('Spend tab', () => {
  it('sends the filters in the URL to the summary (inclusive days) and the records (exclusive end, status)', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?from=2026-11-01&to=2026-11-24&key_id=key_abc&team_id=team_pay&model=gpt-4o-mini&status=failure',
    });
    await screen.findByRole('table', { name: 'Spend records' });

    const summaryQuery = Object.fromEntries(gateway.to(SUMMARY)[0]!.query);
    expect(summaryQuery).toEqual({
      group_by: 'day',
      from: '2026-11-01',
      to: '2026-11-24',
      key_id: 'key_abc',
      team_id: 'team_pay',
      model: 'gpt-4o-mini',
    });
    const logsQuery = Object.fromEntries(gateway.to(LOGS)[0]!.query);
    expect(logsQuery).toEqual({
      from: '2026-11-01',
      to: '2026-11-25',
      key_id: 'key_abc',
      team_id: 'team_pay',
      model: 'gpt-4o-mini',
      status: 'failure',
      limit: '50',
    });
    expect((screen.getByLabelText('Status') as HTMLSelectElement).value).toBe('failure');
    const statusHint = document.getElementById(
      screen.getByLabelText('Status').getAttribute('aria-describedby')!,
    );
    expect(statusHint?.textContent).toBe('Narrows the records and the export; the summary counts both.');
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o-mini');
  });

  it('applies a chosen status at once and typed text on "Apply filters", keeping both in the URL', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });
    await screen.findByRole('table', { name: 'Spend records' });

    await userEvent.selectOptions(screen.getByLabelText('Status'), 'Failed');
    await waitFor(() => expect(gateway.to(LOGS).at(-1)?.query.get('status')).toBe('failure'));

    await userEvent.type(screen.getByLabelText('Model'), 'claude-haiku');
    expect(gateway.to(LOGS).at(-1)?.query.get('model')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Apply filters' }));

    await waitFor(() => expect(gateway.to(LOGS).at(-1)?.query.get('model')).toBe('claude-haiku'));
    expect(gateway.to(SUMMARY).at(-1)?.query.get('model')).toBe('claude-haiku');
    expect(gateway.to(SUMMARY).at(-1)?.query.get('status')).toBeNull();
    expect(screen.getByTestId('location').textContent).toBe('/spend?model=claude-haiku&status=failure');
  });

  it('"Clear filters" empties the URL and asks for everything again', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?model=x&group_by=model',
    });
    await screen.findByRole('table', { name: 'Spend records' });

    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));

    await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/spend'));
    expect(Object.fromEntries(gateway.to(LOGS).at(-1)!.query)).toEqual({ limit: '50' });
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('');
  });

  it('follows the URL when it changes under the form (the Spend tab link clears the filters)', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?model=gpt-4o-mini',
    });
    await screen.findByRole('table', { name: 'Spend records' });
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o-mini');

    await userEvent.click(screen.getByRole('link', { name: 'Spend' }));

    await waitFor(() => expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe(''));
    expect(gateway.to(LOGS).at(-1)?.query.get('model')).toBeNull();
  });

  it('draws "Spend by day" and the summary table when grouped by day', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });

    expect((await screen.findByRole('heading', { name: 'Spend by day' })).tagName).toBe('H3');
    const table = screen.getByRole('table', { name: 'Spend summary' });
    expect(within(table).getByRole('columnheader', { name: 'Day' }).tagName).toBe('TH');
    expect(within(table).getByRole('row', { name: /2026-11-24/ }).textContent).toContain('$2.25');
    const chartData = screen.getByRole('table', { name: 'Spend by day (data)' });
    expect(within(chartData).getAllByRole('row')).toHaveLength(3);
  });

  it('groups by the chosen "Group by" and charts the top groups', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });
    await screen.findByRole('table', { name: 'Spend summary' });

    await userEvent.selectOptions(screen.getByLabelText('Group by'), 'Model');

    expect((await screen.findByRole('heading', { name: 'Spend by model' })).tagName).toBe('H3');
    expect(gateway.to(SUMMARY).at(-1)?.query.get('group_by')).toBe('model');
    const table = screen.getByRole('table', { name: 'Spend summary' });
    expect(within(table).getByRole('row', { name: /claude-haiku/ }).textContent).toContain('$0.25');
    expect(screen.getByTestId('location').textContent).toBe('/spend?group_by=model');
  });

  it('lists the records and "Load more" asks for the next_cursor page and appends it', async () => {
    const gateway = fakeGateway({ [SUMMARY]: summary, [LOGS]: pagedLogs });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?model=gpt-4o-mini',
    });
    const table = await screen.findByRole('table', { name: 'Spend records' });
    expect(within(table).getAllByRole('row')).toHaveLength(3);
    expect(within(table).getAllByRole('row')[1]!.textContent).toContain('150 (120 + 30)');

    await userEvent.click(screen.getByRole('button', { name: 'Load more' }));

    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    const next = gateway.to(LOGS).at(-1)!;
    expect(next.query.get('cursor')).toBe('page-2');
    expect(next.query.get('model')).toBe('gpt-4o-mini');
    const last = within(table).getAllByRole('row')[3]!;
    expect(last.textContent).toContain('429');
    expect(last.textContent).toContain('unknown');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('shows a 400 naming `to` next to the "To" field, not as a page error', async () => {
    const refuse = () => apiError(400, 'Invalid query field to: it must not be before from.', 'to');
    const gateway = fakeGateway({ [SUMMARY]: refuse, [LOGS]: refuse });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?from=2026-11-20&to=2026-11-10',
    });

    const to = await screen.findByLabelText('To');
    await waitFor(() => expect(to.getAttribute('aria-invalid')).toBe('true'));
    const describedBy = to.getAttribute('aria-describedby')!.split(' ');
    const message = describedBy.map((id) => document.getElementById(id)?.textContent).join(' ');
    expect(message).toContain('it must not be before from');
    expect(screen.getByLabelText('From').getAttribute('aria-invalid')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByText('No summary: fix the filter marked above.').tagName).toBe('P');
  });

  it('shows a failure that names no filter where the section is, with "Try again"', async () => {
    const gateway = fakeGateway({
      [SUMMARY]: () => apiError(500, 'Database unavailable.'),
      [LOGS]: pagedLogs,
    });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not load the spend summary');
    expect(within(alert).getByRole('button', { name: 'Try again' }).tagName).toBe('BUTTON');
  });

  it('says what to do when nothing matches', async () => {
    const gateway = fakeGateway({
      [SUMMARY]: () => ({ object: 'list', group_by: 'day', data: [], filters: {} }),
      [LOGS]: () => ({ object: 'list', data: [], next_cursor: null, limit: 50, filters: {} }),
    });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });

    expect((await screen.findByText('No spend in this range.')).className).toBe('empty-title');
    expect((await screen.findByText('No spend records match these filters.')).className).toBe('empty-title');
  });
});

describe('Spend CSV export', () => {
  it('fetches the export with the filters and the Authorization header, then downloads it as a file', async () => {
    const csv = 'request_id,cost\nreq-1,0.0012\nreq-2,0.0012\n';
    let finishExport = () => {};
    const exported = new Promise<void>((resolve) => {
      finishExport = resolve;
    });
    const gateway = fakeGateway({
      [SUMMARY]: summary,
      [LOGS]: pagedLogs,
      [EXPORT]: async () => {
        await exported;
        return { status: 200, text: csv, contentType: 'text/csv' };
      },
    });
    const blobs: Blob[] = [];
    const createUrl = vi.fn((blob: Blob) => {
      blobs.push(blob);
      return 'blob:console/export-1';
    });
    const revokeUrl = vi.fn();
    Object.assign(URL, { createObjectURL: createUrl, revokeObjectURL: revokeUrl });
    const clicked: Array<{ href: string; download: string }> = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.getAttribute('href')!, download: this.download });
    });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend?to=2026-11-24&team_id=team_pay&status=success',
    });
    await screen.findByRole('table', { name: 'Spend records' });

    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    expect(screen.getByRole('button', { name: 'Exporting…' }).hasAttribute('disabled')).toBe(true);
    finishExport();

    await screen.findByText(/^Saved spend-records-\d{4}-\d{2}-\d{2}\.csv \(2 rows\)\.$/);
    const request = gateway.to(EXPORT)[0]!;
    expect(Object.fromEntries(request.query)).toEqual({
      to: '2026-11-25',
      team_id: 'team_pay',
      status: 'success',
    });
    expect(request.headers.authorization).toBe(`Bearer ${TEST_ADMIN_KEY}`);
    expect(gateway.requests.every((sent) => !sent.query.toString().includes(TEST_ADMIN_KEY))).toBe(true);
    expect(await blobs[0]!.text()).toBe(csv);
    expect(clicked).toEqual([
      {
        href: 'blob:console/export-1',
        download: expect.stringMatching(/^spend-records-\d{4}-\d{2}-\d{2}\.csv$/),
      },
    ]);
    await waitFor(() => expect(revokeUrl).toHaveBeenCalledWith('blob:console/export-1'));
  });

  it("says when an export reached the gateway's row cap, so the rest needs narrower dates", async () => {
    const header = 'request_id,cost\n';
    const gateway = fakeGateway({
      [SUMMARY]: summary,
      [LOGS]: pagedLogs,
      [EXPORT]: () => ({
        status: 200,
        text: header + 'r,0\n'.repeat(EXPORT_ROW_CAP),
        contentType: 'text/csv',
      }),
    });
    Object.assign(URL, { createObjectURL: () => 'blob:console/big', revokeObjectURL: () => {} });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });
    await screen.findByRole('table', { name: 'Spend records' });

    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));

    const status = await screen.findByText(/100,000 rows\)\. Exports stop at this many rows/);
    expect(status.getAttribute('role')).toBe('status');
  });

  it('shows a failed export next to the button', async () => {
    const gateway = fakeGateway({
      [SUMMARY]: summary,
      [LOGS]: pagedLogs,
      [EXPORT]: () => apiError(413, 'The export is larger than 100,000 rows: narrow the dates.'),
    });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });
    await screen.findByRole('table', { name: 'Spend records' });

    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(
      'Export failed: The export is larger than 100,000 rows: narrow the dates.',
    );
    expect(screen.getByRole('button', { name: 'Export CSV' }).hasAttribute('disabled')).toBe(false);
  });
});
