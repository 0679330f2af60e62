import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { apiError, fakeGateway } from '../../test-support/fake-gateway.ts';
import { orgAdminActor, renderConsole } from '../../test-support/render-console.tsx';
import { McpPage } from '../mcp-page.tsx';
import type { McpHealth, McpServer } from './mcp-types.ts';
import {
  description,
  detail,
  findRoleWith,
  LIST,
  list,
  ONE,
  operations,
  renderDetail,
  server,
  TOKEN,
} from './server-fixtures.tsx';

describe('MCP servers', () => {
  it('sends the auth token once when registering, and never shows it afterwards', async () => {
    const stored: McpServer[] = [];
    const gateway = fakeGateway({
      [LIST]: (request) => {
        if (request.method === 'GET') return list(stored);
        stored.push(server({ server_key: 'docs', name: 'Docs', base_url: 'https://docs.example.com/mcp' }));
        return { status: 201, json: { ...stored[0], capabilities_refresh: { ok: true, tool_count: 3 } } };
      },
    });
    renderConsole(<McpPage />, { fetch: gateway.fetch, path: '/mcp/servers', route: '/mcp/*' });
    await screen.findByText('No MCP servers registered');
    await userEvent.click(screen.getByRole('button', { name: 'Register server' }));
    const form = screen.getByRole('form', { name: 'Register an MCP server' });
    expect(document.activeElement).toBe(
      within(form).getByRole('heading', { name: 'Register an MCP server' }),
    );
    await userEvent.type(within(form).getByLabelText('Server key'), 'docs');
    await userEvent.type(within(form).getByLabelText('Name'), 'Docs');
    await userEvent.type(within(form).getByLabelText('Base URL'), 'https://docs.example.com/mcp');
    const tokenInput = within(form).getByLabelText('Auth token');
    expect(tokenInput.getAttribute('type')).toBe('password');
    expect(description(tokenInput)).toContain('Stored encrypted; never shown again');
    await userEvent.type(tokenInput, TOKEN);
    await userEvent.click(within(form).getByRole('button', { name: 'Register server' }));

    await findRoleWith('status', 'Registered Docs: 3 tools fetched.');
    const table = await screen.findByRole('table', { name: 'MCP servers' });
    expect(within(table).getByRole('link', { name: 'Docs' })).toBeTruthy();
    const posts = gateway.to(LIST).filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body).toMatchObject({
      server_key: 'docs',
      base_url: 'https://docs.example.com/mcp',
      auth_mode: 'bearer',
      auth_config: { token: TOKEN },
    });
    const carrying = gateway.requests.filter((request) => JSON.stringify(request.body ?? '').includes(TOKEN));
    expect(carrying).toHaveLength(1);
    expect(document.body.textContent).not.toContain(TOKEN);
    expect(screen.queryByLabelText('Auth token')).toBeNull();
  });

  it('sends the optional settings as the API names them: headers as a list, timeout as a number, enabled', async () => {
    const gateway = fakeGateway({
      [LIST]: (request) =>
        request.method === 'GET'
          ? list([])
          : { status: 201, json: { ...server(), capabilities_refresh: { ok: false, error: 'disabled' } } },
    });
    renderConsole(<McpPage />, { fetch: gateway.fetch, path: '/mcp/servers', route: '/mcp/*' });
    await userEvent.click(await screen.findByRole('button', { name: 'Register server' }));
    await userEvent.type(screen.getByLabelText('Server key'), 'ops');
    await userEvent.type(screen.getByLabelText('Base URL'), 'https://ops.example.com/mcp');
    await userEvent.type(screen.getByLabelText('Forwarded headers'), 'x-tenant, x-user');
    await userEvent.type(screen.getByLabelText('Request timeout (ms)'), '5000');
    await userEvent.click(screen.getByLabelText('Enabled'));
    await userEvent.click(screen.getByRole('button', { name: 'Register server' }));
    await findRoleWith('alert', 'fetching its tools failed: disabled');
    expect(gateway.to(LIST).find((request) => request.method === 'POST')?.body).toEqual({
      server_key: 'ops',
      base_url: 'https://ops.example.com/mcp',
      enabled: false,
      forwarded_headers_allowlist: ['x-tenant', 'x-user'],
      request_timeout_ms: 5000,
    });
  });

  it('refuses a timeout that is not whole milliseconds before asking the gateway', async () => {
    const gateway = fakeGateway({ [LIST]: () => list([]) });
    renderConsole(<McpPage />, { fetch: gateway.fetch, path: '/mcp/servers', route: '/mcp/*' });
    await userEvent.click(await screen.findByRole('button', { name: 'Register server' }));
    await userEvent.type(screen.getByLabelText('Server key'), 'ops');
    await userEvent.type(screen.getByLabelText('Base URL'), 'https://ops.example.com/mcp');
    await userEvent.type(screen.getByLabelText('Request timeout (ms)'), '2.5');
    await userEvent.click(screen.getByRole('button', { name: 'Register server' }));
    expect(description(screen.getByLabelText('Request timeout (ms)'))).toContain('Enter whole milliseconds.');
    expect(gateway.to(LIST).filter((request) => request.method === 'POST')).toHaveLength(0);
  });

  it('places a taken server key (409) next to the Server key field', async () => {
    const gateway = fakeGateway({
      [LIST]: (request) =>
        request.method === 'GET'
          ? list([])
          : apiError(409, "An MCP server with server_key 'docs' exists already"),
    });
    renderConsole(<McpPage />, { fetch: gateway.fetch, path: '/mcp/servers', route: '/mcp/*' });
    await userEvent.click(await screen.findByRole('button', { name: 'Register server' }));
    await userEvent.type(screen.getByLabelText('Server key'), 'docs');
    await userEvent.type(screen.getByLabelText('Base URL'), 'https://docs.example.com/mcp');
    await userEvent.click(screen.getByRole('button', { name: 'Register server' }));
    const key = screen.getByLabelText('Server key');
    await screen.findByText(/exists already/);
    expect(description(key)).toContain("server_key 'docs' exists already");
    expect(key.getAttribute('aria-invalid')).toBe('true');
  });

  it('edits without a new token: the PATCH holds only the changed field, neither token nor redacted URL', async () => {
    const gateway = renderDetail({
      [ONE]: (request) => (request.method === 'PATCH' ? server({ name: 'GitHub' }) : detail()),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit GitHub tools' });
    const tokenInput = within(form).getByLabelText('Auth token') as HTMLInputElement;
    expect(tokenInput.value).toBe('');
    expect(description(tokenInput)).toContain('Leave empty to keep the current token');
    const name = within(form).getByLabelText('Name');
    await userEvent.clear(name);
    await userEvent.type(name, 'GitHub');
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    await screen.findByRole('button', { name: 'Edit' });
    const patches = gateway.to(ONE).filter((request) => request.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(patches[0]!.body).toEqual({ name: 'GitHub' });
  });

  it("sends only what this edit changed: another admin's rename that reloads meanwhile is not PATCHed back", async () => {
    let stored = detail();
    const { to, queryClient } = renderDetail({
      [ONE]: (request) => (request.method === 'PATCH' ? server() : stored),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    stored = { ...detail(), name: 'GitHub (renamed elsewhere)' };
    await queryClient.invalidateQueries({ queryKey: ['mcp'] });
    await screen.findByRole('heading', { name: 'GitHub (renamed elsewhere)' });
    const form = screen.getByRole('form', { name: /^Edit / });
    const timeout = within(form).getByLabelText('Request timeout (ms)');
    await userEvent.clear(timeout);
    await userEvent.type(timeout, '60000');
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    await screen.findByRole('button', { name: 'Edit' });
    const patches = to(ONE).filter((request) => request.method === 'PATCH');
    expect(patches.map((request) => request.body)).toEqual([{ request_timeout_ms: 60000 }]);
  });

  it('sends a new token, or null when "Remove the stored token" is ticked', async () => {
    const gateway = renderDetail({
      [ONE]: (request) => (request.method === 'PATCH' ? server() : detail()),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    await userEvent.click(screen.getByLabelText('Remove the stored token'));
    await userEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    await userEvent.type(screen.getByLabelText('Auth token'), TOKEN);
    await userEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByRole('button', { name: 'Edit' });
    const bodies = gateway.to(ONE).flatMap((request) => (request.method === 'PATCH' ? [request.body] : []));
    expect(bodies).toEqual([
      { auth_mode: 'none', auth_config: { token: null } },
      { auth_mode: 'bearer', auth_config: { token: TOKEN } },
    ]);
  });

  it('shows a refused field (forwarded_headers_allowlist[0]) next to Forwarded headers', async () => {
    renderDetail({
      [ONE]: (request) =>
        request.method === 'PATCH'
          ? apiError(
              400,
              'forwarded_headers_allowlist[0]: must be an HTTP header name',
              'forwarded_headers_allowlist[0]',
            )
          : detail(),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const headers = screen.getByLabelText('Forwarded headers');
    await userEvent.type(headers, ', bad header');
    await userEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText(/must be an HTTP header name/);
    expect(description(headers)).toContain('must be an HTTP header name');
  });

  it('shows the tools, and how many a refresh fetched', async () => {
    const gateway = renderDetail({
      [`${ONE}/refresh-capabilities`]: () => ({
        ok: true,
        tool_count: 5,
        skipped_tools: 1,
        server: server(),
      }),
    });
    const tools = await screen.findByRole('table', { name: 'Tools of GitHub tools' });
    expect(within(tools).getByText('github.get_issue')).toBeTruthy();
    expect(within(tools).getByText('repo, number')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Refresh tools' }));
    await findRoleWith('status', 'Fetched 5 tools (1 skipped as invalid).');
    expect(gateway.to(`${ONE}/refresh-capabilities`)[0]!.method).toBe('POST');
  });

  it('shows a passing health check with each step and its latency', async () => {
    const health: McpHealth = {
      server_id: 'srv_1',
      ok: true,
      latency_ms: 45,
      initialize: { ok: true, latency_ms: 12, protocol_version: '2025-06-18', session: true },
      tools_list: { ok: true, latency_ms: 30, tool_count: 2 },
      error: null,
      checked_at: '2026-11-25T09:00:00.000Z',
    };
    renderDetail({ [`${ONE}/health-check`]: () => health });
    await userEvent.click(await screen.findByRole('button', { name: 'Run health check' }));
    const result = (await findRoleWith('status', 'Health check passed')).textContent;
    expect(result).toContain('Health check passed in 45 ms');
    expect(result).toContain('initialize: ok in 12 ms, protocol 2025-06-18, stateful session');
    expect(result).toContain('tools/list: ok in 30 ms, 2 tools');
  });

  it('shows a failed health check as an alert with its message', async () => {
    renderDetail({
      [`${ONE}/health-check`]: () => ({
        server_id: 'srv_1',
        ok: false,
        latency_ms: 2000,
        initialize: { ok: false, latency_ms: 2000, protocol_version: null, session: false },
        tools_list: { ok: false, latency_ms: 0, tool_count: null },
        error: 'connection refused',
        checked_at: '2026-11-25T09:00:00.000Z',
      }),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Run health check' }));
    await findRoleWith('alert', 'Health check failed after 2.00 s: connection refused.');
  });

  it('shows a refusal (403) where the action was taken', async () => {
    renderDetail({ [`${ONE}/health-check`]: () => apiError(403, 'This action needs a proxy administrator') });
    await userEvent.click(await screen.findByRole('button', { name: 'Run health check' }));
    const alert = await findRoleWith('alert', 'Health check failed: This action needs a proxy administrator');
    expect(alert.textContent).toContain('your administrator role does not allow this');
  });

  it("shows the server's operations: calls by outcome and approval counts", async () => {
    renderDetail();
    const operations = await screen.findByRole('region', { name: 'Operations' });
    expect(await within(operations).findByText('ok: 4')).toBeTruthy();
    expect(within(operations).getByText(/pending: 1/)).toBeTruthy();
    expect(within(operations).getByText('No tool calls yet.')).toBeTruthy();
  });

  it('deletes after confirmation and returns to the list', async () => {
    const gateway = renderDetail({
      [ONE]: (request) => (request.method === 'DELETE' ? { deleted: true, server_id: 'srv_1' } : detail()),
      [LIST]: () => list([]),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await userEvent.click(screen.getByRole('button', { name: 'Confirm delete' }));
    await screen.findByText('No MCP servers registered');
    expect(gateway.to(ONE).filter((request) => request.method === 'DELETE')).toHaveLength(1);
    expect(screen.getByTestId('location').textContent).toBe('/mcp/servers');
  });

  it('does not ask for a deleted server again (its detail and operations would answer 404)', async () => {
    let deleted = false;
    const gateway = renderDetail({
      [ONE]: (request) => {
        if (request.method === 'DELETE') {
          deleted = true;
          return { deleted: true, server_id: 'srv_1' };
        }
        return deleted ? apiError(404, 'MCP server srv_1 not found') : detail();
      },
      [`${ONE}/operations`]: () => (deleted ? apiError(404, 'MCP server srv_1 not found') : operations),
      [LIST]: () => list([]),
    });
    await screen.findByRole('region', { name: 'Operations' });
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await userEvent.click(screen.getByRole('button', { name: 'Confirm delete' }));
    await screen.findByText('No MCP servers registered');
    const afterDelete = (path: string) => {
      const requests = gateway.to(path);
      const at = requests.findIndex((request) => request.method === 'DELETE');
      return requests.slice(at + 1);
    };
    expect(afterDelete(ONE)).toEqual([]);
    expect(gateway.to(`${ONE}/operations`).length).toBe(1);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('MCP servers for an organization administrator', () => {
  it('offers no register button on the list', async () => {
    const gateway = fakeGateway({ [LIST]: () => list([server()]) });
    renderConsole(<McpPage />, {
      fetch: gateway.fetch,
      path: '/mcp/servers',
      route: '/mcp/*',
      actor: orgAdminActor('org_1'),
    });
    await screen.findByRole('table', { name: 'MCP servers' });
    expect(screen.queryByRole('button', { name: 'Register server' })).toBeNull();
  });

  it('shows a server read-only: no write buttons and no operations request (proxy-only)', async () => {
    const gateway = renderDetail({}, orgAdminActor('org_1'));
    await screen.findByRole('table', { name: 'Tools of GitHub tools' });
    for (const name of ['Refresh tools', 'Run health check', 'Edit', 'Delete'])
      expect(screen.queryByRole('button', { name })).toBeNull();
    expect(gateway.to(`${ONE}/operations`)).toHaveLength(0);
  });
});
