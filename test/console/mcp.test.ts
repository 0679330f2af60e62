/**
 * Flows 5–6 (issue 17): an operator registers an MCP server in the console, refreshes its tools and runs
 * a health check; a tool call that needs approval waits in the approval inbox, is approved there with a
 * comment, and the caller's retried call then runs. An admin who created the calling key sees Approve
 * disabled with the reason (four-eyes, docs/mcp.md "Approvals").
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, fakeTools, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { adminOk, bind, connectClient, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { type ConsoleHarness, type ConsolePage, startConsoleHarness } from './support/console-harness.ts';
import { bodyRows, describedText, expectNoProblems, table } from './support/page-queries.ts';

const UPSTREAM_TOKEN = 'mcp-upstream-token-for-the-console-suite';

describe('MCP in the console', () => {
  let harness: ConsoleHarness;
  let upstream: FakeMcpServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    harness = await startConsoleHarness();
    harness.gateway.scanner.add(UPSTREAM_TOKEN, 'MCP upstream token');
    upstream = await startFakeMcpServer({ mode: 'stateful', token: UPSTREAM_TOKEN });
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await harness?.close();
    await upstream?.close();
  });

  async function mcpClient(key: string): Promise<Client> {
    const client = await connectClient(harness.baseUrl, key);
    clients.push(client);
    return client;
  }

  async function signedIn(flow: string, key: string, path: string): Promise<ConsolePage> {
    const console = await harness.openConsole(flow);
    await console.openSignedIn(key, path);
    return console;
  }

  /** The approval request id a call that needs approval is refused with (-32008). */
  async function pendingApproval(client: Client, name: string, args: Record<string, unknown>) {
    const refusal = await client.callTool({ name, arguments: args }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(McpError);
    expect((refusal as McpError).code).toBe(-32008);
    return (refusal as McpError & { data: { approval_request_id: string } }).data.approval_request_id;
  }

  /** "New binding" on the Bindings tab: the server's tools for one API key. */
  async function bindKeyInUi(console: ConsolePage, server: string, keyId: string) {
    const page = console.page;
    await page.getByRole('button', { name: 'New binding' }).click();
    const form = page.locator('form').filter({ has: page.getByRole('heading', { name: 'New binding' }) });
    await form.getByLabel('Server', { exact: true }).selectOption({ label: server });
    await form.getByLabel('Scope type').selectOption({ label: 'API key' });
    await form.getByLabel('Scope ID').fill(keyId);
    await form.locator('button[type="submit"]').click();
    await bodyRows(table(page, 'Bindings')).filter({ hasText: keyId }).waitFor();
    await console.screenshot('bindings');
  }

  /** "New policy" on the Policies tab: the server-wide default for one tool, manual approval. */
  async function createApprovalPolicyInUi(console: ConsolePage, server: string, tool: string) {
    const page = console.page;
    await page.getByRole('button', { name: 'New policy' }).click();
    const form = page.locator('form').filter({ has: page.getByRole('heading', { name: 'New policy' }) });
    await form.getByLabel('Server', { exact: true }).selectOption({ label: server });
    await form.getByLabel('Tool name').fill(tool);
    await form.getByLabel('Require approval').selectOption('manual');
    await form.locator('button[type="submit"]').click();
    const row = bodyRows(table(page, 'Tool policies')).filter({ hasText: tool });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/manual|approval/i);
    await console.screenshot('policies');
  }

  it('registers a server, lists its tools after "Refresh tools", shows a passing health check, edits and deletes it', async () => {
    const console = await signedIn('mcp-register', harness.masterKey, '/ui/mcp/servers');
    const page = console.page;
    await page.getByRole('button', { name: 'Register server' }).first().click();
    await page.getByRole('heading', { name: 'Register an MCP server' }).waitFor();
    await page.getByLabel('Server key').fill('docs');
    await page.getByLabel('Name', { exact: true }).fill('Docs search');
    await page.getByLabel('Base URL').fill(upstream.url);
    const token = page.getByLabel('Auth token');
    expect(await token.getAttribute('type')).toBe('password');
    expect(await describedText(token)).toContain('Stored encrypted; never shown again');
    await token.fill(UPSTREAM_TOKEN);
    await page.locator('button[type="submit"]', { hasText: 'Register server' }).click();

    const servers = table(page, 'MCP servers');
    await servers.getByText('Docs search').first().waitFor();
    await console.screenshot('servers');
    await servers
      .getByRole('link', { name: 'Docs search' })
      .or(servers.getByRole('button', { name: 'Docs search' }))
      .first()
      .click();
    await page.getByRole('heading', { name: 'Docs search' }).waitFor();

    await page.getByRole('button', { name: 'Refresh tools' }).click();
    const tools = table(page, 'Tools of Docs search');
    for (const tool of fakeTools) await tools.getByText(`docs.${tool.name}`, { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Run health check' }).click();
    const result = page.getByRole('status').filter({ hasText: /Health check/ });
    await result.waitFor();
    expect(await result.innerText()).toMatch(/Health check passed[\s\S]*tools\/list: ok/);
    await console.screenshot('server-detail');
    // The token went to the upstream, and the page never received it back.
    expect(
      upstream.requests.some((request) => request.headers.authorization === `Bearer ${UPSTREAM_TOKEN}`),
    ).toBe(true);
    expect(await page.content()).not.toContain(UPSTREAM_TOKEN);

    // Edit: the token field starts empty (write-only) and leaving it so keeps the stored token.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    expect(await page.getByLabel('Auth token').inputValue()).toBe('');
    await page.getByLabel('Name', { exact: true }).fill('Docs search v2');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Docs search v2', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Run health check' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Health check passed/ })
      .waitFor();

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.waitForURL(/\/ui\/mcp\/servers$/);
    await page.getByRole('heading', { name: 'Docs search v2', exact: true }).waitFor({ state: 'detached' });
    expect((await adminOk(harness.gateway, 'GET', '/ui/api/mcp-servers')).data).toEqual([]);
    expectNoProblems(console);
  });

  it('a call that needs approval waits in the inbox with tool, arguments and caller; "Approve" lets the retried call run', async () => {
    const server = await registerServer(harness.gateway, {
      server_key: 'ops',
      name: 'Ops tools',
      base_url: upstream.url,
      auth_config: { token: UPSTREAM_TOKEN },
    });
    const caller = await createKey(harness.gateway, { key_name: 'deploy-bot' });
    const console = await signedIn('mcp-approve', harness.masterKey, '/ui/mcp/bindings');
    const page = console.page;
    await bindKeyInUi(console, 'Ops tools (ops)', caller.keyId);
    await page.getByRole('link', { name: 'Policies', exact: true }).click();
    await createApprovalPolicyInUi(console, 'Ops tools (ops)', 'echo');

    const client = await mcpClient(caller.key);
    const args = { text: 'restart the staging cluster' };
    await pendingApproval(client, 'ops.echo', args);

    await page.getByRole('link', { name: 'Approvals', exact: true }).click();
    await page.getByRole('heading', { name: 'Approval inbox' }).waitFor();
    const pending = table(page, 'Pending approvals');
    const row = bodyRows(pending).filter({ hasText: 'restart the staging cluster' });
    await row.waitFor();
    const rowText = await row.innerText();
    expect(rowText).toContain('echo');
    expect(rowText).toMatch(/deploy-bot|key_/);
    await console.screenshot('approvals');

    await row.getByLabel(/^Comment for /).fill('Approved for the 10:00 window');
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText('No pending approvals').waitFor();
    const decision = bodyRows(table(page, 'Recent decisions')).filter({
      hasText: 'Approved for the 10:00 window',
    });
    expect(await decision.innerText()).toMatch(/ops\.echo[\s\S]*Approved[\s\S]*deploy-bot/);
    await console.screenshot('approvals-decided');

    const answer = await client.callTool({ name: 'ops.echo', arguments: args });
    expect(answer.content).toEqual([{ type: 'text', text: 'restart the staging cluster' }]);
    const decided = await adminOk(
      harness.gateway,
      'GET',
      `/ui/api/mcp-approval-requests?server_id=${server.server_id}`,
    );
    expect(decided.data[0]).toMatchObject({
      status: 'approved',
      decision_comment: 'Approved for the 10:00 window',
    });
    expectNoProblems(console);
  });

  it('an admin who created the calling key sees "Approve" disabled with the reason next to it, and may reject', async () => {
    const server = await registerServer(harness.gateway, {
      server_key: 'self',
      base_url: upstream.url,
      auth_config: { token: UPSTREAM_TOKEN },
    });
    await adminOk(harness.gateway, 'POST', '/ui/api/users', { user_id: 'pat-admin', role: 'proxy_admin' });
    const adminKey = await createKey(harness.gateway, { user_id: 'pat-admin', key_name: 'pat-admin-key' });
    // Pat creates the calling key with their own admin key: it records created_by = pat-admin.
    const created = await fetch(`${harness.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key_name: 'pats-script' }),
    });
    expect(created.status).toBe(201);
    const callerKey = (await created.json()) as { key: string; key_id: string };
    await bind(harness.gateway, {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: callerKey.key_id,
    });
    await adminOk(harness.gateway, 'POST', '/ui/api/mcp-tool-policies', {
      server_id: server.server_id,
      tool_name: 'add',
      require_approval: 'manual',
    });
    const client = await mcpClient(callerKey.key);
    await pendingApproval(client, 'self.add', { a: 20, b: 22 });

    const console = await signedIn('mcp-four-eyes', adminKey.key, '/ui/mcp/approvals');
    const row = bodyRows(table(console.page, 'Pending approvals')).filter({ hasText: 'add' });
    await row.waitFor();
    const approve = row.getByRole('button', { name: 'Approve' });
    expect(await approve.isDisabled()).toBe(true);
    expect(await describedText(approve)).toMatch(/four-eyes: you are behind the key that made this call/i);
    expect(await row.getByRole('button', { name: 'Reject' }).isEnabled()).toBe(true);
    await console.screenshot('approvals-four-eyes');

    // The key's owner may still reject: the identical call is then refused with -32009.
    await row.getByLabel(/^Comment for /).fill('Not from a script');
    await row.getByRole('button', { name: 'Reject' }).click();
    await row.waitFor({ state: 'detached' });
    const refusal = await client
      .callTool({ name: 'self.add', arguments: { a: 20, b: 22 } })
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(McpError);
    expect((refusal as McpError).code).toBe(-32009);
    expectNoProblems(console);
  });
});
