import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiError, fakeGateway, type RecordedRequest } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { APPROVALS_POLL_MS, ApprovalsTab, SELF_APPROVAL_REASON } from './approvals-tab.tsx';
import type { McpApproval } from './mcp-types.ts';

const LIST = '/ui/api/mcp-approval-requests';
const NOW = Date.parse('2026-11-25T09:30:00.000Z');
const decisionPath = (id: string) => `${LIST}/${id}/decision`;

function approval(overrides: Partial<McpApproval> = {}): McpApproval {
  return {
    approval_request_id: 'apr_1',
    server_id: 'srv_1',
    server_key: 'github',
    tool_name: 'delete_repo',
    arguments: { repo: 'acme/site' },
    forwarded_header_names: ['x-tenant'],
    key_id: 'key_7',
    key_owner_user_id: 'bob',
    status: 'pending',
    // Three minutes and ten seconds before NOW.
    created_at: '2026-11-25T09:26:50.000Z',
    expires_at: '2026-11-26T09:26:50.000Z',
    decided_at: null,
    decided_by: null,
    decision_comment: null,
    consumed_at: null,
    decision_applies_until: null,
    capabilities: { can_decide: true, can_approve: true },
    ...overrides,
  };
}

const list = (data: McpApproval[]) => ({ object: 'list', data, total: data.length, limit: 500, offset: 0 });

/**
 * A gateway holding `requests`: the pending list is filtered by `status`, and a decision moves the
 * request out of pending as the real one does.
 */
function inbox(requests: McpApproval[], decide?: (request: RecordedRequest) => unknown) {
  const routes: Record<string, (request: RecordedRequest) => unknown> = {
    '/ui/api/keys/key_7': () => ({ key_id: 'key_7', key_name: 'ci-bot', team_id: 'team_a', user_id: 'bob' }),
    '/ui/api/mcp-servers': () => ({
      object: 'list',
      data: [{ server_id: 'srv_1', server_key: 'github', name: 'GitHub tools' }],
      total: 1,
      limit: 500,
      offset: 0,
    }),
    [LIST]: (request) => {
      const status = request.query.get('status');
      return list(status ? requests.filter((item) => item.status === status) : requests);
    },
  };
  for (const item of requests)
    routes[decisionPath(item.approval_request_id)] = (request) => {
      const refused = decide?.(request);
      if (refused) return refused;
      const body = request.body as { status: 'approved' | 'rejected'; decision_comment?: string };
      Object.assign(item, {
        status: body.status,
        decided_at: '2026-11-25T09:30:00.000Z',
        decided_by: 'master',
        decision_comment: body.decision_comment ?? null,
        capabilities: { can_decide: false, can_approve: false },
      });
      return item;
    };
  const gateway = fakeGateway(routes);
  renderConsole(<ApprovalsTab now={() => NOW} />, {
    fetch: gateway.fetch,
    path: '/mcp/approvals',
    route: '/mcp/approvals',
  });
  return gateway;
}

async function pendingRow(tool: string) {
  const table = await screen.findByRole('table', { name: 'Pending approvals' });
  const row = within(table)
    .getAllByRole('row')
    .find((candidate) => within(candidate).queryByText(tool) !== null);
  if (!row) throw new Error(`no pending row for ${tool}`);
  return row;
}

describe('Approval inbox', () => {
  it('shows each pending call with its tool, arguments, caller and age', async () => {
    const gateway = inbox([approval()]);
    expect(await screen.findByRole('heading', { name: 'Approval inbox' })).toBeTruthy();
    const row = await pendingRow('github.delete_repo');
    expect(within(row).getByText(/"repo": "acme\/site"/).tagName).toBe('PRE');
    expect(within(row).getByText('key_7')).toBeTruthy();
    expect(within(row).getByText('bob')).toBeTruthy();
    expect(await within(row).findByText('ci-bot')).toBeTruthy();
    expect(within(row).getByText('team_a')).toBeTruthy();
    expect(within(row).getByText('x-tenant')).toBeTruthy();
    expect(within(row).getByText('3 min ago')).toBeTruthy();
    const headers = within(screen.getByRole('table', { name: 'Pending approvals' }))
      .getAllByRole('columnheader')
      .map((header) => header.textContent);
    expect(headers.slice(0, 4)).toEqual(['Tool', 'Arguments', 'Caller', 'Age']);
    expect(gateway.to(LIST).some((request) => request.query.get('status') === 'pending')).toBe(true);
  });

  it('collapses long arguments behind a disclosure', async () => {
    inbox([approval({ arguments: { body: 'x'.repeat(400) } })]);
    const row = await pendingRow('github.delete_repo');
    const summary = within(row).getByText(/Show arguments/);
    expect(summary.tagName).toBe('SUMMARY');
    expect(summary.closest('details')?.open).toBe(false);
  });

  it('approves with the typed comment, and the request moves to the recent decisions', async () => {
    const gateway = inbox([approval()]);
    const row = await pendingRow('github.delete_repo');
    await userEvent.type(
      within(row).getByLabelText('Comment for github.delete_repo'),
      'ok for the migration',
    );
    await userEvent.click(within(row).getByRole('button', { name: 'Approve' }));
    const decisions = await screen.findByRole('table', { name: 'Recent decisions' });
    expect(within(decisions).getByText('Approved')).toBeTruthy();
    expect(within(decisions).getByText('ok for the migration')).toBeTruthy();
    expect(gateway.to(decisionPath('apr_1')).map((request) => request.body)).toEqual([
      { status: 'approved', decision_comment: 'ok for the migration' },
    ]);
    await waitFor(() => expect(screen.queryByRole('table', { name: 'Pending approvals' })).toBeNull());
    expect(screen.getByText('No pending approvals')).toBeTruthy();
  });

  it('rejects without a comment: the body carries only the decision', async () => {
    const gateway = inbox([approval()]);
    const row = await pendingRow('github.delete_repo');
    await userEvent.click(within(row).getByRole('button', { name: 'Reject' }));
    const decisions = await screen.findByRole('table', { name: 'Recent decisions' });
    expect(within(decisions).getByText('Rejected')).toBeTruthy();
    expect(gateway.to(decisionPath('apr_1')).map((request) => request.body)).toEqual([
      { status: 'rejected' },
    ]);
  });

  it('disables Approve with the four-eyes reason beside it when can_approve is false, and still allows Reject', async () => {
    inbox([approval({ capabilities: { can_decide: true, can_approve: false } })]);
    const row = await pendingRow('github.delete_repo');
    const approve = within(row).getByRole('button', { name: 'Approve' }) as HTMLButtonElement;
    expect(approve.disabled).toBe(true);
    const reasonId = approve.getAttribute('aria-describedby') ?? '';
    expect(document.getElementById(reasonId)?.textContent).toBe(SELF_APPROVAL_REASON);
    expect((within(row).getByRole('button', { name: 'Reject' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('shows a refused decision in the row it was made in, and keeps the request pending', async () => {
    inbox([approval()], () => apiError(409, 'approval request apr_1 expired'));
    const row = await pendingRow('github.delete_repo');
    await userEvent.click(within(row).getByRole('button', { name: 'Approve' }));
    const alert = await within(row).findByRole('alert');
    expect(alert.textContent).toContain('Decision not recorded: approval request apr_1 expired');
    expect(screen.getByRole('table', { name: 'Pending approvals' })).toBeTruthy();
  });

  it('narrows the inbox and the decisions to the chosen server (server_id)', async () => {
    const gateway = inbox([approval()]);
    await pendingRow('github.delete_repo');
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await waitFor(() =>
      expect(gateway.to(LIST).filter((request) => request.query.get('server_id') === 'srv_1')).toHaveLength(
        2,
      ),
    );
    const filtered = gateway.to(LIST).filter((request) => request.query.get('server_id') === 'srv_1');
    expect(filtered.map((request) => request.query.get('status')).sort()).toEqual([null, 'pending'].sort());
  });

  it('says "No pending approvals" when the inbox is empty', async () => {
    inbox([]);
    expect(await screen.findByText('No pending approvals')).toBeTruthy();
    expect(screen.queryByRole('table', { name: 'Pending approvals' })).toBeNull();
    expect(await screen.findByText('No decisions yet.')).toBeTruthy();
  });

  it('asks for new pending requests every 5 seconds', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const requests = [approval()];
    const gateway = inbox(requests);
    await pendingRow('github.delete_repo');
    const pendingLists = () =>
      gateway.to(LIST).filter((request) => request.query.get('status') === 'pending');
    const before = pendingLists().length;
    requests.push(approval({ approval_request_id: 'apr_2', tool_name: 'merge_pr' }));
    await vi.advanceTimersByTimeAsync(APPROVALS_POLL_MS);
    expect(pendingLists().length).toBe(before + 1);
    expect(await pendingRow('github.merge_pr')).toBeTruthy();
  });
});

afterEach(() => {
  vi.useRealTimers();
});
