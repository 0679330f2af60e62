/**
 * Keyboard focus on the MCP pages: a form that closes gives the focus back to the button that opened it,
 * and an action button keeps the focus while its action runs (busy only for its own request).
 */
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeGateway } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { McpPage } from '../mcp-page.tsx';
import type { McpHealth } from './mcp-types.ts';
import { detail, LIST, list, ONE, renderDetail, server } from './server-fixtures.tsx';

const health: McpHealth = {
  server_id: 'srv_1',
  ok: true,
  latency_ms: 45,
  initialize: { ok: true, latency_ms: 12, protocol_version: '2025-06-18', session: true },
  tools_list: { ok: true, latency_ms: 30, tool_count: 2 },
  error: null,
  checked_at: '2026-11-25T09:00:00.000Z',
};

/** An answer the test gives when it chooses: `answer()` resolves the request made meanwhile. */
function deferred<T>() {
  let answer: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    answer = resolve;
  });
  return { promise, answer };
}

function renderTab(path: string, routes: Parameters<typeof fakeGateway>[0] = {}) {
  const gateway = fakeGateway({
    [LIST]: () => list([server()]),
    '/ui/api/mcp-bindings': () => list([]),
    '/ui/api/mcp-tool-policies': () => list([]),
    ...routes,
  });
  renderConsole(<McpPage />, { fetch: gateway.fetch, path, route: '/mcp/*' });
  return gateway;
}

describe('MCP forms give the focus back to the button that opened them', () => {
  it.each([
    ['/mcp/servers', 'Register server', 'Register an MCP server'],
    ['/mcp/bindings', 'New binding', 'New binding'],
    ['/mcp/policies', 'New policy', 'New policy'],
  ])('%s: Cancel returns the focus to "%s"', async (path, opener, form) => {
    renderTab(path);
    await userEvent.click(await screen.findByRole('button', { name: opener }));
    const opened = screen.getByRole('form', { name: form });
    await userEvent.click(within(opened).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: form })).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: opener }));
  });

  it('returns the focus to "Register server" once a registration succeeds', async () => {
    renderTab('/mcp/servers', {
      [LIST]: (request) =>
        request.method === 'POST'
          ? { status: 201, json: { ...server(), capabilities_refresh: { ok: true, tool_count: 2 } } }
          : list([server()]),
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Register server' }));
    const form = screen.getByRole('form', { name: 'Register an MCP server' });
    await userEvent.type(within(form).getByLabelText('Server key'), 'docs');
    await userEvent.type(within(form).getByLabelText('Base URL'), 'https://docs.example.com/mcp');
    await userEvent.click(within(form).getByRole('button', { name: 'Register server' }));
    const opener = await screen.findByRole('button', { name: 'Register server' });
    expect(document.activeElement).toBe(opener);
  });

  it('returns the focus to "Edit" when the edit form is cancelled or saved', async () => {
    renderDetail({ [ONE]: (request) => (request.method === 'PATCH' ? server() : detail()) });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Edit' }));
    await userEvent.click(screen.getByRole('button', { name: 'Edit' }));
    await userEvent.type(screen.getByLabelText('Name'), ' (prod)');
    await userEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByRole('button', { name: 'Edit' })).toBe(document.activeElement);
  });
});

describe('Server actions keep the focus while they run', () => {
  it('Refresh tools is busy (aria-disabled, focused, a second press sends nothing) only until its answer, not while the page reloads', async () => {
    const refresh = deferred<unknown>();
    let reload: Promise<unknown> | null = null;
    const gateway = renderDetail({
      [`${ONE}/refresh-capabilities`]: () => refresh.promise,
      [ONE]: () => reload ?? detail(),
    });
    const button = await screen.findByRole('button', { name: 'Refresh tools' });
    button.focus();
    await userEvent.keyboard('{Enter}');
    const busy = await screen.findByRole('button', { name: 'Refreshing tools…' });
    expect(busy.getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(busy);
    await userEvent.keyboard('{Enter}');
    expect(gateway.to(`${ONE}/refresh-capabilities`)).toHaveLength(1);
    // The page's reload after the refresh waits until the test lets it go.
    reload = deferred<unknown>().promise;
    refresh.answer({ ok: true, tool_count: 5, skipped_tools: 0, server: server() });
    const free = await screen.findByRole('button', { name: 'Refresh tools' });
    expect(free.getAttribute('aria-disabled')).toBeNull();
    expect(document.activeElement).toBe(free);
  });

  it('Run health check keeps the focus while it runs and after its result shows', async () => {
    const check = deferred<unknown>();
    const gateway = renderDetail({ [`${ONE}/health-check`]: () => check.promise });
    const button = await screen.findByRole('button', { name: 'Run health check' });
    button.focus();
    await userEvent.keyboard('{Enter}');
    const busy = await screen.findByRole('button', { name: 'Checking health…' });
    expect(busy.getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(busy);
    await userEvent.keyboard('{Enter}');
    expect(gateway.to(`${ONE}/health-check`)).toHaveLength(1);
    check.answer(health);
    await screen.findByText(/Health check passed/);
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Run health check' }));
  });
});
