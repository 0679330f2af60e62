import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Actor } from '../../auth/session.tsx';
import { apiError, fakeGateway, type RecordedRequest } from '../../test-support/fake-gateway.ts';
import { orgAdminActor, renderConsole } from '../../test-support/render-console.tsx';
import { McpPage } from '../mcp-page.tsx';
import type { McpBinding, McpPolicy } from './mcp-types.ts';

const SERVERS = '/ui/api/mcp-servers';
const BINDINGS = '/ui/api/mcp-bindings';
const POLICIES = '/ui/api/mcp-tool-policies';

const list = (data: unknown[]) => ({ object: 'list', data, total: data.length, limit: 500, offset: 0 });
const servers = list([
  {
    server_id: 'srv_1',
    server_key: 'github',
    name: 'GitHub tools',
    transport: 'streamable_http',
    base_url: 'https://tools.example.com/mcp',
    enabled: true,
    auth_mode: 'none',
    auth_config: { token_set: false },
    forwarded_headers_allowlist: [],
    request_timeout_ms: 30000,
    source: 'api',
    tool_count: 2,
    tools_refreshed_at: null,
    last_refresh_error: null,
    created_at: '2026-11-25T08:00:00.000Z',
    updated_at: '2026-11-25T08:00:00.000Z',
  },
]);

const binding: McpBinding = {
  binding_id: 'mcpb_1',
  server_id: 'srv_1',
  scope_type: 'team',
  scope_id: 'team_a',
  enabled: true,
  tool_allowlist: ['get_issue'],
  created_at: '2026-11-25T08:00:00.000Z',
  updated_at: '2026-11-25T08:00:00.000Z',
};

const policy: McpPolicy = {
  policy_id: 'mcpp_1',
  server_id: 'srv_1',
  tool_name: 'delete_repo',
  scope_type: null,
  scope_id: null,
  enabled: true,
  require_approval: 'manual',
  max_rpm: 10,
  max_concurrency: null,
  result_cache_ttl_seconds: null,
  max_total_execution_time_ms: null,
  is_ceiling: false,
  created_at: '2026-11-25T08:00:00.000Z',
  updated_at: '2026-11-25T08:00:00.000Z',
};

function renderTab(
  path: string,
  routes: Record<string, (request: RecordedRequest) => unknown>,
  actor?: Actor,
) {
  const gateway = fakeGateway({ [SERVERS]: () => servers, ...routes });
  renderConsole(<McpPage />, { fetch: gateway.fetch, path, route: '/mcp/*', actor });
  return gateway;
}

const posts = (requests: RecordedRequest[]) => requests.filter((request) => request.method === 'POST');

function description(input: HTMLElement): string {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
}

describe('MCP bindings', () => {
  it('lists bindings with server key, scope and allowed tools', async () => {
    renderTab('/mcp/bindings', { [BINDINGS]: () => list([binding]) });
    const table = await screen.findByRole('table', { name: 'Bindings' });
    const row = within(table).getAllByRole('row')[1]!;
    expect(within(row).getByText('Team team_a')).toBeTruthy();
    expect(within(row).getByText('get_issue')).toBeTruthy();
    expect(await within(row).findByText('github')).toBeTruthy();
  });

  it('creates a binding with the fields of the form (empty allowlist means every tool: null)', async () => {
    const gateway = renderTab('/mcp/bindings', {
      [BINDINGS]: (request) => (request.method === 'POST' ? { status: 201, json: binding } : list([])),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New binding' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.selectOptions(screen.getByLabelText('Scope type'), 'team');
    await userEvent.type(screen.getByLabelText('Scope ID'), 'team_a');
    await userEvent.click(screen.getByRole('button', { name: 'Save binding' }));
    await screen.findByRole('button', { name: 'New binding' });
    expect(posts(gateway.to(BINDINGS)).map((request) => request.body)).toEqual([
      { server_id: 'srv_1', scope_type: 'team', scope_id: 'team_a', enabled: true, tool_allowlist: null },
    ]);
  });

  it('offers the teams and keys the administrator may see as Scope ID choices, named', async () => {
    renderTab('/mcp/bindings', {
      [BINDINGS]: () => list([]),
      '/ui/api/teams': () => list([{ team_id: 'team_a', team_alias: 'Alpha' }, { team_id: 'team_b' }]),
      '/ui/api/keys': () => list([{ key_id: 'key_9', key_name: 'billing-bot' }]),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New binding' }));
    const choices = async () => {
      const input = screen.getByLabelText('Scope ID');
      const datalist = document.getElementById(input.getAttribute('list') ?? '');
      await waitFor(() => expect(datalist?.querySelectorAll('option').length).toBeGreaterThan(0));
      return Array.from(datalist!.querySelectorAll('option')).map((option) => [
        option.value,
        option.textContent,
      ]);
    };
    await userEvent.selectOptions(screen.getByLabelText('Scope type'), 'team');
    expect(await choices()).toEqual([
      ['team_a', 'Alpha'],
      ['team_b', 'team_b'],
    ]);
    await userEvent.selectOptions(screen.getByLabelText('Scope type'), 'api_key');
    expect(await choices()).toEqual([['key_9', 'billing-bot']]);
  });

  it('sends a typed tool allowlist as a list, and a disabled binding as enabled: false', async () => {
    const gateway = renderTab('/mcp/bindings', {
      [BINDINGS]: (request) => (request.method === 'POST' ? { status: 201, json: binding } : list([])),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New binding' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.selectOptions(screen.getByLabelText('Scope type'), 'api_key');
    await userEvent.type(screen.getByLabelText('Scope ID'), 'key_9');
    await userEvent.type(screen.getByLabelText('Tool allowlist'), 'get_issue, list_repos');
    await userEvent.click(screen.getByLabelText('Enabled'));
    await userEvent.click(screen.getByRole('button', { name: 'Save binding' }));
    await screen.findByRole('button', { name: 'New binding' });
    expect(posts(gateway.to(BINDINGS))[0]!.body).toEqual({
      server_id: 'srv_1',
      scope_type: 'api_key',
      scope_id: 'key_9',
      enabled: false,
      tool_allowlist: ['get_issue', 'list_repos'],
    });
  });

  it('shows an unknown scope (404 naming scope_id) next to the Scope ID field', async () => {
    renderTab('/mcp/bindings', {
      [BINDINGS]: (request) =>
        request.method === 'POST'
          ? apiError(404, 'scope_id: team team_x does not exist', 'scope_id')
          : list([]),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New binding' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.type(screen.getByLabelText('Scope ID'), 'team_x');
    await userEvent.click(screen.getByRole('button', { name: 'Save binding' }));
    await screen.findByText('scope_id: team team_x does not exist');
    expect(description(screen.getByLabelText('Scope ID'))).toContain('team team_x does not exist');
  });

  it('refuses a binding without a server before asking the gateway', async () => {
    const gateway = renderTab('/mcp/bindings', { [BINDINGS]: () => list([]) });
    await userEvent.click(await screen.findByRole('button', { name: 'New binding' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save binding' }));
    expect(description(screen.getByLabelText('Server'))).toContain('Choose the server');
    expect(posts(gateway.to(BINDINGS))).toHaveLength(0);
  });

  it('deletes a binding after confirmation', async () => {
    const gateway = renderTab('/mcp/bindings', {
      [BINDINGS]: () => list([binding]),
      [`${BINDINGS}/mcpb_1`]: () => ({ deleted: true, binding_id: 'mcpb_1' }),
    });
    const table = await screen.findByRole('table', { name: 'Bindings' });
    await userEvent.click(within(table).getByRole('button', { name: 'Delete binding of Team team_a' }));
    // The confirm names its row, so one table's confirms are told apart (visible text "Confirm delete").
    const confirm = within(table).getByRole('button', { name: 'Confirm delete binding of Team team_a' });
    expect(confirm.textContent).toBe('Confirm delete');
    await userEvent.click(confirm);
    await waitFor(() => expect(gateway.to(BINDINGS).length).toBeGreaterThan(1));
    const deletes = gateway.requests.filter((request) => request.method === 'DELETE');
    expect(deletes.map((request) => request.path)).toEqual(['/ui/api/mcp-bindings/mcpb_1']);
    expect(gateway.to(BINDINGS).length).toBeGreaterThan(1);
  });

  it('shows the delete under way on its row, which takes no second press', async () => {
    let release: () => void = () => {};
    renderTab('/mcp/bindings', {
      [BINDINGS]: () => list([binding]),
      [`${BINDINGS}/mcpb_1`]: () =>
        new Promise((resolve) => {
          release = () => resolve({ deleted: true, binding_id: 'mcpb_1' });
        }),
    });
    const table = await screen.findByRole('table', { name: 'Bindings' });
    await userEvent.click(within(table).getByRole('button', { name: 'Delete binding of Team team_a' }));
    await userEvent.click(
      within(table).getByRole('button', { name: 'Confirm delete binding of Team team_a' }),
    );
    const busy = (await within(table).findByRole('button', {
      name: 'Delete binding of Team team_a',
    })) as HTMLButtonElement;
    await waitFor(() => expect(busy.textContent).toBe('Delete…'));
    expect(busy.disabled).toBe(true);
    release();
  });
});

describe('MCP tool policies', () => {
  it('creates a server-wide policy: no scope fields, limits as numbers or null, enabled as ticked', async () => {
    const gateway = renderTab('/mcp/policies', {
      [POLICIES]: (request) => (request.method === 'POST' ? { status: 201, json: policy } : list([])),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New policy' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.type(screen.getByLabelText('Tool name'), 'delete_repo');
    await userEvent.selectOptions(screen.getByLabelText('Require approval'), 'manual');
    await userEvent.type(screen.getByLabelText('Max calls per minute'), '10');
    await userEvent.type(screen.getByLabelText('Max execution time (ms)'), '8000');
    await userEvent.click(screen.getByLabelText(/^Enabled/));
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    await screen.findByRole('button', { name: 'New policy' });
    expect(posts(gateway.to(POLICIES)).map((request) => request.body)).toEqual([
      {
        server_id: 'srv_1',
        tool_name: 'delete_repo',
        enabled: false,
        require_approval: 'manual',
        max_rpm: 10,
        max_concurrency: null,
        result_cache_ttl_seconds: null,
        max_total_execution_time_ms: 8000,
        is_ceiling: false,
      },
    ]);
  });

  it('marks a server-wide policy as a ceiling, and shows the refusal of a looser policy next to its field', async () => {
    const gateway = renderTab('/mcp/policies', {
      [POLICIES]: (request) =>
        request.method === 'POST'
          ? request.body && (request.body as { is_ceiling?: boolean }).is_ceiling
            ? { status: 201, json: { ...policy, is_ceiling: true } }
            : apiError(
                403,
                'require_approval: the server-wide ceiling requires manual approval',
                'require_approval',
              )
          : list([]),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'New policy' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.type(screen.getByLabelText('Tool name'), 'delete_repo');
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    expect(description(screen.getByLabelText('Require approval'))).toContain('requires manual approval');
    await userEvent.click(screen.getByLabelText(/^Ceiling/));
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    await screen.findByRole('button', { name: 'New policy' });
    expect(
      posts(gateway.to(POLICIES)).map((request) => (request.body as { is_ceiling?: boolean }).is_ceiling),
    ).toEqual([false, true]);
  });

  it('lists a ceiling as "Server-wide ceiling"', async () => {
    renderTab('/mcp/policies', { [POLICIES]: () => list([{ ...policy, is_ceiling: true }]) });
    const table = await screen.findByRole('table', { name: 'Tool policies' });
    expect(within(table).getByText('Server-wide ceiling')).toBeTruthy();
  });

  it('refuses a limit that is not a whole number ≥ 1 next to its field, without asking the gateway', async () => {
    const gateway = renderTab('/mcp/policies', { [POLICIES]: () => list([]) });
    await userEvent.click(await screen.findByRole('button', { name: 'New policy' }));
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.type(screen.getByLabelText('Tool name'), '*');
    await userEvent.type(screen.getByLabelText('Max concurrent calls'), '0');
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    expect(description(screen.getByLabelText('Max concurrent calls'))).toContain(
      'whole number of at least 1',
    );
    expect(posts(gateway.to(POLICIES))).toHaveLength(0);
  });

  it('lists policies as "Tool policies" with approval and limits', async () => {
    renderTab('/mcp/policies', { [POLICIES]: () => list([policy]) });
    const table = await screen.findByRole('table', { name: 'Tool policies' });
    const row = within(table).getAllByRole('row')[1]!;
    expect(within(row).getByText('Server-wide default')).toBeTruthy();
    expect(within(row).getByText('Manual')).toBeTruthy();
    expect(within(row).getByText('10')).toBeTruthy();
  });

  it('deletes a policy after confirmation', async () => {
    const gateway = renderTab('/mcp/policies', {
      [POLICIES]: () => list([policy]),
      [`${POLICIES}/mcpp_1`]: () => ({ deleted: true, policy_id: 'mcpp_1' }),
    });
    const table = await screen.findByRole('table', { name: 'Tool policies' });
    await userEvent.click(
      within(table).getByRole('button', { name: 'Delete policy of delete_repo (Server-wide default)' }),
    );
    await userEvent.click(
      within(table).getByRole('button', {
        name: 'Confirm delete policy of delete_repo (Server-wide default)',
      }),
    );
    await waitFor(() => expect(gateway.to(POLICIES).length).toBeGreaterThan(1));
    const deletes = gateway.requests.filter((request) => request.method === 'DELETE');
    expect(deletes.map((request) => request.path)).toEqual(['/ui/api/mcp-tool-policies/mcpp_1']);
  });

  it('gives an organization administrator only scoped policies, prefilled with their organization', async () => {
    const gateway = renderTab(
      '/mcp/policies',
      { [POLICIES]: (request) => (request.method === 'POST' ? { status: 201, json: policy } : list([])) },
      orgAdminActor('org_1'),
    );
    await userEvent.click(await screen.findByRole('button', { name: 'New policy' }));
    expect(screen.queryByRole('option', { name: 'Server-wide default' })).toBeNull();
    expect(screen.queryByLabelText(/^Ceiling/)).toBeNull();
    expect((screen.getByLabelText('Scope ID') as HTMLInputElement).value).toBe('org_1');
    await screen.findByRole('option', { name: 'GitHub tools (github)' });
    await userEvent.selectOptions(screen.getByLabelText('Server'), 'srv_1');
    await userEvent.type(screen.getByLabelText('Tool name'), 'get_issue');
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    await screen.findByRole('button', { name: 'New policy' });
    expect(posts(gateway.to(POLICIES))[0]!.body).toMatchObject({
      scope_type: 'organization',
      scope_id: 'org_1',
    });
  });
});
