/** Fixtures of the MCP server tests: a stored server, its detail page, and the page rendered on a fake. */
import { screen, waitFor } from '@testing-library/react';
import type { Actor } from '../../auth/session.tsx';
import { fakeGateway, type RecordedRequest } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { McpPage } from '../mcp-page.tsx';
import type { McpServer, McpServerDetail } from './mcp-types.ts';

export const LIST = '/ui/api/mcp-servers';
export const ONE = '/ui/api/mcp-servers/srv_1';
export const TOKEN = 'tok-very-secret-42';

export function server(overrides: Partial<McpServer> = {}): McpServer {
  return {
    server_id: 'srv_1',
    server_key: 'github',
    name: 'GitHub tools',
    transport: 'streamable_http',
    base_url: 'https://tools.example.com/mcp?token=REDACTED',
    enabled: true,
    auth_mode: 'bearer',
    auth_config: { token_set: true },
    forwarded_headers_allowlist: ['x-tenant'],
    request_timeout_ms: 30000,
    source: 'api',
    tool_count: 2,
    tools_refreshed_at: '2026-11-25T09:00:00.000Z',
    last_refresh_error: null,
    created_at: '2026-11-25T08:00:00.000Z',
    updated_at: '2026-11-25T08:00:00.000Z',
    ...overrides,
  };
}

export function detail(): McpServerDetail {
  return {
    ...server(),
    tools: [
      {
        name: 'github.get_issue',
        tool_name: 'get_issue',
        description: 'Read an issue',
        input_schema: { type: 'object', properties: { repo: {}, number: {} } },
        refreshed_at: '2026-11-25T09:00:00.000Z',
      },
    ],
    bindings: [],
    policies: [],
  };
}

export const list = (data: unknown[]) => ({
  object: 'list',
  data,
  total: data.length,
  limit: 500,
  offset: 0,
});

export const operations = {
  server_id: 'srv_1',
  server_key: 'github',
  scope: 'process',
  call_counts: { ok: 4 },
  recent_calls: [],
  recent_failures: [],
  approval_counts: { pending: 1, approved: 0, rejected: 0, expired: 0 },
  last_refresh_error: null,
  tools_refreshed_at: null,
};

export function renderDetail(
  routes: Record<string, (request: RecordedRequest) => unknown> = {},
  actor?: Actor,
) {
  const gateway = fakeGateway({
    [ONE]: () => detail(),
    [`${ONE}/operations`]: () => operations,
    ...routes,
  });
  const { queryClient } = renderConsole(<McpPage />, {
    fetch: gateway.fetch,
    path: '/mcp/servers/srv_1',
    route: '/mcp/*',
    actor,
  });
  return { ...gateway, queryClient };
}

/** The first element of `role` (status, alert) whose text contains `text`, once one appears. */
export function findRoleWith(role: 'status' | 'alert', text: string): Promise<HTMLElement> {
  return waitFor(() => {
    const found = screen.getAllByRole(role).find((element) => element.textContent?.includes(text));
    if (!found) throw new Error(`no ${role} containing "${text}"`);
    return found;
  });
}

/** The texts an input's aria-describedby points at (its hint and its error). */
export function description(input: HTMLElement): string {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
}
