import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiError, type FakeRoute, fakeGateway } from '../../test-support/fake-gateway.ts';
import { renderConsole, TEST_ADMIN_KEY } from '../../test-support/render-console.tsx';
import { SpendPage } from '../spend-page.tsx';
import type { AuditAnswer, AuditEntry } from './spend-types.ts';

const AUDIT = '/ui/api/audit';
const EXPORT = '/ui/api/audit/export';

function entry(id: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    object: 'audit_entry',
    audit_id: id,
    created_at: '2026-11-24T09:00:00.000Z',
    actor: 'master',
    actor_key_id: null,
    action: 'key.update',
    target_type: 'key',
    target_id: 'key_abc',
    organization_id: null,
    request_id: `req-${id}`,
    before: { rpm_limit: 10 },
    after: { rpm_limit: 60 },
    ...overrides,
  };
}

const pagedAudit: FakeRoute = (request): AuditAnswer => {
  const second = request.query.get('cursor') === 'audit-page-2';
  return {
    object: 'list',
    data: second
      ? [entry('a3', { action: 'team.create', target_type: 'team', target_id: 'team_pay', before: null })]
      : [entry('a1'), entry('a2', { actor: 'user:alice', action: 'key.delete', after: null })],
    has_more: !second,
    next_cursor: second ? null : 'audit-page-2',
    limit: 50,
  };
};

const { createObjectURL, revokeObjectURL } = URL;
afterEach(() => {
  vi.restoreAllMocks();
  Object.assign(URL, { createObjectURL, revokeObjectURL });
});

describe('Audit log tab', () => {
  it('lists who changed what, with the before and after kept in a collapsed <details>', async () => {
    const gateway = fakeGateway({ [AUDIT]: pagedAudit });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend/audit' });

    const table = await screen.findByRole('table', { name: 'Audit log' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]!.textContent).toContain('master');
    expect(rows[1]!.textContent).toContain('key.update');
    expect(rows[1]!.textContent).toContain('key_abc');
    const details = rows[1]!.querySelector('details')!;
    expect(details.open).toBe(false);
    expect(details.textContent).toContain('"rpm_limit": 60');
    expect(rows[2]!.textContent).toContain('user:alice');
    expect(rows[2]!.textContent).toContain('nothing (deleted)');
    expect(gateway.to(AUDIT)[0]!.headers.authorization).toBe(`Bearer ${TEST_ADMIN_KEY}`);
  });

  it('"Load more" asks for the next_cursor page with the same filters and appends it', async () => {
    const gateway = fakeGateway({ [AUDIT]: pagedAudit });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend/audit?actor=master',
    });
    const table = await screen.findByRole('table', { name: 'Audit log' });

    await userEvent.click(screen.getByRole('button', { name: 'Load more' }));

    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    const next = gateway.to(AUDIT).at(-1)!;
    expect(next.query.get('cursor')).toBe('audit-page-2');
    expect(next.query.get('actor')).toBe('master');
    expect(within(table).getAllByRole('row')[3]!.textContent).toContain('team.create');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('sends the filters (the last day included) and keeps a chosen action in the URL', async () => {
    const gateway = fakeGateway({ [AUDIT]: pagedAudit });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend/audit?from=2026-11-01&to=2026-11-24&target_id=key_abc',
    });
    await screen.findByRole('table', { name: 'Audit log' });
    expect(Object.fromEntries(gateway.to(AUDIT)[0]!.query)).toEqual({
      from: '2026-11-01',
      to: '2026-11-25',
      target_id: 'key_abc',
      limit: '50',
    });

    await userEvent.selectOptions(screen.getByLabelText('Action'), 'approval.approve');

    await waitFor(() => expect(gateway.to(AUDIT).at(-1)?.query.get('action')).toBe('approval.approve'));
    expect(screen.getByTestId('location').textContent).toBe(
      '/spend/audit?from=2026-11-01&to=2026-11-24&action=approval.approve&target_id=key_abc',
    );
  });

  it('shows a refused filter next to its field', async () => {
    const gateway = fakeGateway({
      [AUDIT]: () =>
        apiError(400, 'from: must be an ISO 8601 date-time (e.g. 2027-01-31T00:00:00Z).', 'from'),
    });
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend/audit?from=yesterday',
    });

    const from = await screen.findByLabelText('From');
    await waitFor(() => expect(from.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText(/must be an ISO 8601 date-time/).className).toBe('field-error');
  });

  it('says what to do when no entry matches', async () => {
    const gateway = fakeGateway({
      [AUDIT]: () => ({ object: 'list', data: [], has_more: false, next_cursor: null, limit: 50 }),
    });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend/audit' });

    expect((await screen.findByText('No audit entries match these filters.')).className).toBe('empty-title');
  });

  it('exports the filtered log from /ui/api/audit/export with the Authorization header', async () => {
    const gateway = fakeGateway({
      [AUDIT]: pagedAudit,
      [EXPORT]: () => ({ status: 200, text: 'audit_id,action\na1,key.update\n', contentType: 'text/csv' }),
    });
    const createUrl = vi.fn(() => 'blob:console/audit');
    Object.assign(URL, { createObjectURL: createUrl, revokeObjectURL: vi.fn() });
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    renderConsole(<SpendPage />, {
      fetch: gateway.fetch,
      route: '/spend/*',
      path: '/spend/audit?action=key.update',
    });
    await screen.findByRole('table', { name: 'Audit log' });

    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));

    await screen.findByText(/^Saved audit-log-\d{4}-\d{2}-\d{2}\.csv \(1 row\)\.$/);
    const request = gateway.to(EXPORT)[0]!;
    expect(Object.fromEntries(request.query)).toEqual({ action: 'key.update' });
    expect(request.headers.authorization).toBe(`Bearer ${TEST_ADMIN_KEY}`);
    expect(createUrl).toHaveBeenCalledOnce();
    expect(click).toHaveBeenCalledOnce();
  });

  it('reaches the audit log from the Spend tab through its tab link', async () => {
    const gateway = fakeGateway({
      [AUDIT]: pagedAudit,
      '/ui/api/spend/summary': () => ({ object: 'list', group_by: 'day', data: [], filters: {} }),
      '/ui/api/spend/logs': () => ({ object: 'list', data: [], next_cursor: null, limit: 50, filters: {} }),
    });
    renderConsole(<SpendPage />, { fetch: gateway.fetch, route: '/spend/*', path: '/spend' });
    await screen.findByText('No spend in this range.');

    await userEvent.click(screen.getByRole('link', { name: 'Audit log' }));

    expect((await screen.findByRole('table', { name: 'Audit log' })).tagName).toBe('TABLE');
    expect(screen.getByRole('link', { name: 'Audit log' }).getAttribute('aria-current')).toBe('page');
  });
});
