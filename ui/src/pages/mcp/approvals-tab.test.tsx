import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiError, fakeGateway, type RecordedRequest } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { SELF_APPROVAL_REASON } from './approval-decision.tsx';
import { APPROVALS_POLL_MS, ApprovalsTab } from './approvals-tab.tsx';
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

/** While `held` is set, the approval lists wait for it before answering (a poll in flight). */
interface ListGate {
  held: Promise<void> | null;
}

/** Holds the lists until the returned function is called. */
function hold(gate: ListGate): () => void {
  let release: () => void = () => {};
  gate.held = new Promise((resolve) => {
    release = resolve;
  });
  return () => {
    gate.held = null;
    release();
  };
}

/**
 * A gateway holding `requests`: the list is filtered by `status` and cut at `limit`, newest first, as the
 * real one is, and a decision moves the request out of pending as the real one does.
 */
function inbox(
  requests: McpApproval[],
  decide?: (request: RecordedRequest) => unknown,
  gate: ListGate = { held: null },
) {
  const routes: Record<string, (request: RecordedRequest) => unknown> = {
    '/ui/api/keys/key_7': () => ({ key_id: 'key_7', key_name: 'ci-bot', team_id: 'team_a', user_id: 'bob' }),
    '/ui/api/mcp-servers': () => ({
      object: 'list',
      data: [{ server_id: 'srv_1', server_key: 'github', name: 'GitHub tools' }],
      total: 1,
      limit: 500,
      offset: 0,
    }),
    [LIST]: async (request) => {
      await gate.held;
      const status = request.query.get('status');
      const limit = Number(request.query.get('limit') ?? 100);
      const matching = requests
        .filter((item) => status === null || item.status === status)
        .sort((a, b) => b.created_at.localeCompare(a.created_at));
      return { object: 'list', data: matching.slice(0, limit), total: matching.length, limit, offset: 0 };
    },
  };
  for (const item of requests)
    routes[decisionPath(item.approval_request_id)] = async (request) => {
      // `decide` may refuse, or hold the decision until a promise it returns settles with no refusal.
      const refused = await decide?.(request);
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
        4,
      ),
    );
    const filtered = gateway.to(LIST).filter((request) => request.query.get('server_id') === 'srv_1');
    expect(filtered.map((request) => request.query.get('status')).sort()).toEqual([
      'approved',
      'expired',
      'pending',
      'rejected',
    ]);
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

/** `count` requests of one status, one a minute apart, the newest `newest` minutes before NOW. */
function series(status: McpApproval['status'], count: number, newest: number, tool: string) {
  return Array.from({ length: count }, (_, index) =>
    approval({
      approval_request_id: `apr_${tool}_${index}`,
      tool_name: `${tool}_${index}`,
      status,
      created_at: new Date(NOW - (newest + index) * 60_000).toISOString(),
      decided_at: status === 'pending' ? null : '2026-11-25T09:29:00.000Z',
      capabilities: { can_decide: status === 'pending', can_approve: status === 'pending' },
    }),
  );
}

describe('Recent decisions', () => {
  it('asks for the decided statuses, so newer pending requests cannot push every decision off the list', async () => {
    const gateway = inbox([...series('pending', 60, 1, 'fresh'), ...series('rejected', 1, 120, 'old')]);
    const decisions = await screen.findByRole('table', { name: 'Recent decisions' });
    expect(within(decisions).getByText('github.old_0')).toBeTruthy();
    expect(within(decisions).getByText('Rejected')).toBeTruthy();
    const decidedAsks = gateway.to(LIST).filter((request) => request.query.get('status') !== 'pending');
    expect(new Set(decidedAsks.map((request) => request.query.get('status')))).toEqual(
      new Set(['approved', 'rejected', 'expired']),
    );
  });

  it('shows the 50 newest decisions across statuses and says how many there are in all', async () => {
    // Approvals at minutes 1, 3, 5 … and rejections at 2, 4, 6 … before NOW: the newest 50 are minutes 1-50.
    const approved = series('approved', 40, 1, 'approved').map((item, index) => ({
      ...item,
      created_at: new Date(NOW - (1 + 2 * index) * 60_000).toISOString(),
    }));
    const rejected = series('rejected', 40, 2, 'rejected').map((item, index) => ({
      ...item,
      created_at: new Date(NOW - (2 + 2 * index) * 60_000).toISOString(),
    }));
    inbox([...approved, ...rejected]);
    const decisions = await screen.findByRole('table', { name: 'Recent decisions' });
    const rows = within(decisions).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(50);
    expect(within(rows[0]!).getByText('github.approved_0')).toBeTruthy();
    expect(within(rows[1]!).getByText('github.rejected_0')).toBeTruthy();
    expect(within(rows[49]!).getByText('github.rejected_24')).toBeTruthy();
    expect(screen.getByText('The 50 newest of 80 decisions.')).toBeTruthy();
  });

  it('says nothing of a cut when every decision is shown', async () => {
    inbox(series('approved', 3, 1, 'few'));
    await screen.findByRole('table', { name: 'Recent decisions' });
    expect(screen.queryByText(/newest of/)).toBeNull();
  });
});

describe('Decision buttons and the keyboard focus', () => {
  it('leaves Approve enabled and focused while a poll is in flight', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const gate: ListGate = { held: null };
    const requests = [approval()];
    const gateway = inbox(requests, undefined, gate);
    const row = await pendingRow('github.delete_repo');
    const approve = within(row).getByRole('button', { name: 'Approve' }) as HTMLButtonElement;
    approve.focus();
    const release = hold(gate);
    const before = gateway.to(LIST).length;
    await vi.advanceTimersByTimeAsync(APPROVALS_POLL_MS);
    expect(gateway.to(LIST).length).toBeGreaterThan(before);
    expect(approve.disabled).toBe(false);
    expect(approve.getAttribute('aria-disabled')).toBeNull();
    expect(document.activeElement).toBe(approve);
    requests.push(approval({ approval_request_id: 'apr_2', tool_name: 'merge_pr' }));
    release();
    expect(await pendingRow('github.merge_pr')).toBeTruthy();
    expect(document.activeElement).toBe(approve);
  });

  it('keeps the focus on a pressed Approve while the decision is sent, and a second press sends nothing', async () => {
    let answer: (refusal: unknown) => void = () => {};
    const gateway = inbox(
      [approval()],
      () =>
        new Promise((resolve) => {
          answer = resolve;
        }),
    );
    const row = await pendingRow('github.delete_repo');
    within(row).getByRole('button', { name: 'Approve' }).focus();
    await userEvent.keyboard('{Enter}');
    const busy = await within(row).findByRole('button', { name: 'Approving…' });
    expect(busy.getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(busy);
    await userEvent.keyboard('{Enter}');
    expect(gateway.to(decisionPath('apr_1'))).toHaveLength(1);
    answer(apiError(409, 'approval request apr_1 expired'));
    expect(await within(row).findByRole('alert')).toBeTruthy();
    expect(within(row).getByRole('button', { name: 'Approve' })).toBe(document.activeElement);
  });

  it('moves the focus from a decided row, which leaves the table, to the inbox heading, and says what was decided', async () => {
    inbox([approval()]);
    const row = await pendingRow('github.delete_repo');
    within(row).getByRole('button', { name: 'Approve' }).focus();
    await userEvent.keyboard('{Enter}');
    const status = await screen.findByRole('status');
    expect(status.textContent).toBe('Approved github.delete_repo: it is listed under Recent decisions.');
    expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Approval inbox' }));
    await waitFor(() => expect(screen.queryByRole('table', { name: 'Pending approvals' })).toBeNull());
  });

  it('leaves the focus where the operator moved it while an earlier decision was being sent', async () => {
    let answer: () => void = () => {};
    inbox([approval(), approval({ approval_request_id: 'apr_2', tool_name: 'merge_pr' })], (request) =>
      request.path.includes('apr_1')
        ? new Promise<undefined>((resolve) => {
            answer = () => resolve(undefined);
          })
        : undefined,
    );
    const first = await pendingRow('github.delete_repo');
    await userEvent.click(within(first).getByRole('button', { name: 'Reject' }));
    const comment = within(await pendingRow('github.merge_pr')).getByLabelText('Comment for github.merge_pr');
    await userEvent.click(comment);
    answer();
    expect((await screen.findByRole('status')).textContent).toContain('Rejected github.delete_repo');
    expect(document.activeElement).toBe(comment);
  });

  it('frees Reject when a refused decision is answered, not after the lists it reloads', async () => {
    const gate: ListGate = { held: null };
    inbox([approval()], () => apiError(409, 'approval request apr_1 expired'), gate);
    const row = await pendingRow('github.delete_repo');
    const reject = within(row).getByRole('button', { name: 'Reject' });
    reject.focus();
    hold(gate);
    await userEvent.keyboard('{Enter}');
    expect(await within(row).findByRole('alert')).toBeTruthy();
    const after = within(row).getByRole('button', { name: 'Reject' }) as HTMLButtonElement;
    expect(after.disabled).toBe(false);
    expect(after.getAttribute('aria-disabled')).toBeNull();
    expect(document.activeElement).toBe(after);
  });
});

afterEach(() => {
  vi.useRealTimers();
});
