/**
 * The MCP admin API (issue 5) on both backends: servers (secrets write-only, `http` normalized,
 * duplicate keys, 400 naming the field, 404 for unknown ids, pagination), refresh-capabilities,
 * health-check, bindings and policies create-or-update, and servers bootstrapped from mcp_servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, callTool, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('MCP admin API on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  let configured: FakeMcpServer;

  beforeAll(async () => {
    backend = makeBackend();
    [upstream, configured] = await Promise.all([
      startFakeMcpServer({ mode: 'stateful', token: 'tok-1' }),
      startFakeMcpServer({ mode: 'stateless' }),
    ]);
    process.env.SWITCHBOARD_TEST_MCP_URL = configured.url;
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
mcp_servers:
  boot:
    url: os.environ/SWITCHBOARD_TEST_MCP_URL
    transport: http
    forwarded_headers_allowlist: [X-Team]
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([upstream?.close(), configured?.close()]);
    await backend?.cleanup();
  });

  it('creates a server, fetches its catalogue and never returns the token', async () => {
    const created = await gateway.admin('POST', '/ui/api/mcp-servers', {
      server_key: 'secure',
      name: 'Secure tools',
      transport: 'http',
      base_url: upstream.url,
      auth_mode: 'bearer',
      auth_config: { token: 'tok-1' },
      forwarded_headers_allowlist: ['X-Request-Tag'],
      request_timeout_ms: 5_000,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      server_key: 'secure',
      name: 'Secure tools',
      transport: 'streamable_http',
      auth_mode: 'bearer',
      auth_config: { token_set: true },
      forwarded_headers_allowlist: ['x-request-tag'],
      request_timeout_ms: 5_000,
      source: 'api',
      tool_count: 5,
      capabilities_refresh: { ok: true, tool_count: 5 },
    });
    const id = created.body.server_id;
    for (const path of ['/ui/api/mcp-servers', `/ui/api/mcp-servers/${id}`]) {
      expect(JSON.stringify((await gateway.admin('GET', path)).body)).not.toContain('tok-1');
    }
    const detail = await adminOk(gateway, 'GET', `/ui/api/mcp-servers/${id}`);
    expect(detail.tools.map((tool: any) => tool.name)).toContain('secure.echo');
    expect(detail.tools.find((tool: any) => tool.tool_name === 'echo').input_schema.required).toEqual([
      'text',
    ]);
    const stored = await gateway.gateway.database.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('server_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.auth_token_sealed).not.toContain('tok-1');
    expect(stored.transport).toBe('streamable_http');
  });

  it('shows a server with its tools, bindings and policies', async () => {
    const server = await registerServer(gateway, { server_key: 'detailed', base_url: configured.url });
    const key = await createKey(gateway);
    const binding = await gateway.admin('POST', '/ui/api/mcp-bindings', {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo'],
    });
    expect(binding.status).toBe(201);
    const update = await gateway.admin('POST', '/ui/api/mcp-bindings', {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: null,
    });
    expect(update.status).toBe(200);
    expect(update.body).toMatchObject({
      binding_id: binding.body.binding_id,
      tool_allowlist: null,
      enabled: true,
    });
    const policy = await gateway.admin('POST', '/ui/api/mcp-tool-policies', {
      server_id: server.server_id,
      tool_name: 'echo',
      scope_type: 'api_key',
      scope_id: key.keyId,
      max_rpm: 10,
    });
    expect(policy.status).toBe(201);
    const policyUpdate = await gateway.admin('POST', '/ui/api/mcp-tool-policies', {
      server_id: server.server_id,
      tool_name: 'echo',
      scope_type: 'api_key',
      scope_id: key.keyId,
      require_approval: 'manual',
    });
    expect(policyUpdate.status).toBe(200);
    expect(policyUpdate.body).toMatchObject({
      policy_id: policy.body.policy_id,
      max_rpm: 10,
      require_approval: 'manual',
    });
    const detail = await adminOk(gateway, 'GET', `/ui/api/mcp-servers/${server.server_id}`);
    expect(detail.bindings).toHaveLength(1);
    expect(detail.policies).toHaveLength(1);
    expect(detail.tools).toHaveLength(5);
    const bindings = await adminOk(gateway, 'GET', `/ui/api/mcp-bindings?server_id=${server.server_id}`);
    expect(bindings).toMatchObject({ object: 'list', total: 1, limit: 100, offset: 0 });
    const policies = await adminOk(gateway, 'GET', `/ui/api/mcp-tool-policies?scope_id=${key.keyId}`);
    expect(policies.total).toBe(1);
  });

  it('updates with PATCH (omitted fields keep their value) and refuses a duplicate server_key with 409', async () => {
    const server = await registerServer(gateway, { server_key: 'patchme', base_url: configured.url });
    const patched = await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${server.server_id}`, {
      name: 'Renamed',
      enabled: false,
    });
    expect(patched).toMatchObject({
      name: 'Renamed',
      enabled: false,
      base_url: configured.url,
      server_key: 'patchme',
    });
    expect(
      (
        await gateway.admin('POST', '/ui/api/mcp-servers', {
          server_key: 'patchme',
          base_url: configured.url,
        })
      ).status,
    ).toBe(409);
    expect(
      (await gateway.admin('PATCH', `/ui/api/mcp-servers/${server.server_id}`, { server_key: 'secure' }))
        .status,
    ).toBe(409);
  });

  it.each([
    ['server_key', { server_key: 'has space', base_url: 'http://127.0.0.1:1/mcp' }],
    ['base_url', { server_key: 'bad-url', base_url: 'not a url' }],
    ['base_url', { server_key: 'ftp-url', base_url: 'ftp://example.com/mcp' }],
    ['transport', { server_key: 'bad-transport', base_url: 'http://127.0.0.1:1/mcp', transport: 'stdio' }],
    [
      'auth_config.token',
      { server_key: 'no-token', base_url: 'http://127.0.0.1:1/mcp', auth_mode: 'bearer' },
    ],
    [
      'request_timeout_ms',
      { server_key: 'bad-timeout', base_url: 'http://127.0.0.1:1/mcp', request_timeout_ms: 0 },
    ],
    [
      'forwarded_headers_allowlist',
      {
        server_key: 'bad-header',
        base_url: 'http://127.0.0.1:1/mcp',
        forwarded_headers_allowlist: ['Authorization'],
      },
    ],
    [
      'forwarded_headers_allowlist[0]',
      {
        server_key: 'bad-header2',
        base_url: 'http://127.0.0.1:1/mcp',
        forwarded_headers_allowlist: ['bad header'],
      },
    ],
    ['surprise', { server_key: 'unknown-field', base_url: 'http://127.0.0.1:1/mcp', surprise: 1 }],
  ])('refuses a server with a bad %s with 400 naming the field, storing nothing', async (field, body) => {
    const before = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).total;
    const response = await gateway.admin('POST', '/ui/api/mcp-servers', body);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(field);
    expect((await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).total).toBe(before);
  });

  it('refuses a binding with a bad scope_type with 400 naming the field', async () => {
    const server = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).data[0];
    const response = await gateway.admin('POST', '/ui/api/mcp-bindings', {
      server_id: server.server_id,
      scope_type: 'user',
      scope_id: 'x',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('scope_type');
  });

  it.each([
    ['max_rpm', { max_rpm: 0 }],
    ['max_concurrency', { max_concurrency: 1.5 }],
    ['require_approval', { require_approval: 'always' }],
    ['scope_id', { scope_type: 'team' }],
    ['scope_type', { scope_id: 'x' }],
    ['result_cache_ttl_seconds', { result_cache_ttl_seconds: '60' }],
  ])('refuses a policy with a bad %s with 400 naming the field', async (field, extra) => {
    const server = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).data[0];
    const response = await gateway.admin('POST', '/ui/api/mcp-tool-policies', {
      server_id: server.server_id,
      tool_name: 'echo',
      ...extra,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(field);
  });

  it('answers 404 for unknown ids', async () => {
    for (const [method, path] of [
      ['GET', '/ui/api/mcp-servers/nope'],
      ['PATCH', '/ui/api/mcp-servers/nope'],
      ['DELETE', '/ui/api/mcp-servers/nope'],
      ['GET', '/ui/api/mcp-servers/nope/operations'],
      ['POST', '/ui/api/mcp-servers/nope/refresh-capabilities'],
      ['POST', '/ui/api/mcp-servers/nope/health-check'],
      ['DELETE', '/ui/api/mcp-bindings/nope'],
      ['DELETE', '/ui/api/mcp-tool-policies/nope'],
    ] as const) {
      const response = await gateway.admin(method, path, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(response.status, `${method} ${path}`).toBe(404);
    }
  });

  it('answers 404 naming the field for a binding or policy that references an unknown server, team or key (issue 9)', async () => {
    const server = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).data[0];
    for (const [path, body, field] of [
      ['/ui/api/mcp-bindings', { server_id: 'nope', scope_type: 'team', scope_id: 'x' }, 'server_id'],
      [
        '/ui/api/mcp-bindings',
        { server_id: server.server_id, scope_type: 'team', scope_id: 'nope' },
        'scope_id',
      ],
      [
        '/ui/api/mcp-bindings',
        { server_id: server.server_id, scope_type: 'api_key', scope_id: 'nope' },
        'scope_id',
      ],
      ['/ui/api/mcp-tool-policies', { server_id: 'nope', tool_name: 'echo' }, 'server_id'],
      [
        '/ui/api/mcp-tool-policies',
        { server_id: server.server_id, tool_name: 'echo', scope_type: 'organization', scope_id: 'nope' },
        'scope_id',
      ],
    ] as const) {
      const response = await gateway.admin('POST', path, body);
      expect(response.status, `${path} ${field}`).toBe(404);
      expect(response.body.error.param).toBe(field);
    }
  });

  it('never answers 500 to concurrent identical binding or policy POSTs (issue 9)', async () => {
    const server = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).data[0];
    const key = await createKey(gateway);
    const binding = { server_id: server.server_id, scope_type: 'api_key', scope_id: key.keyId };
    const policy = {
      server_id: server.server_id,
      tool_name: 'race',
      scope_type: 'api_key',
      scope_id: key.keyId,
    };
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => gateway.admin('POST', '/ui/api/mcp-bindings', binding)),
      ...Array.from({ length: 8 }, () => gateway.admin('POST', '/ui/api/mcp-tool-policies', policy)),
    ]);
    for (const answer of answers) expect([200, 201]).toContain(answer.status);
    const bindings = await adminOk(gateway, 'GET', `/ui/api/mcp-bindings?scope_id=${key.keyId}`);
    expect(bindings.total).toBe(1);
  });

  it('paginates servers with limit, offset and total', async () => {
    const all = await adminOk(gateway, 'GET', '/ui/api/mcp-servers');
    const page = await adminOk(gateway, 'GET', '/ui/api/mcp-servers?limit=1&offset=1');
    expect(page).toMatchObject({ object: 'list', total: all.total, limit: 1, offset: 1 });
    expect(page.data[0].server_id).toBe(all.data[1].server_id);
    expect((await gateway.admin('GET', '/ui/api/mcp-servers?limit=501')).status).toBe(400);
  });

  it('health-checks an upstream: initialize and tools/list with outcome and latency', async () => {
    const healthy = await registerServer(gateway, {
      server_key: 'healthy',
      base_url: upstream.url,
      auth_config: { token: 'tok-1' },
    });
    const report = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${healthy.server_id}/health-check`);
    expect(report).toMatchObject({
      ok: true,
      initialize: { ok: true, protocol_version: '2025-06-18', session: true },
      tools_list: { ok: true, tool_count: 5 },
      error: null,
    });
    expect(report.latency_ms).toBeGreaterThan(0);
    // The check's throwaway session is ended (HTTP DELETE), so repeated checks do not pile up upstream.
    const listed = upstream.requests.findLast((entry) => entry.body?.method === 'tools/list')!;
    const sessionId = listed.headers['mcp-session-id'];
    expect(sessionId).toBeTruthy();
    expect(
      upstream.requests.some(
        (entry) => entry.method === 'DELETE' && entry.headers['mcp-session-id'] === sessionId,
      ),
    ).toBe(true);
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${healthy.server_id}`, {
      auth_config: { token: 'wrong' },
    });
    const failing = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${healthy.server_id}/health-check`);
    expect(failing).toMatchObject({ ok: false, initialize: { ok: false }, tools_list: { ok: false } });
    expect(failing.error).toContain("rejected the gateway's credentials");
    expect(failing.error).not.toContain('wrong');
  });

  it('calls the upstream with the configured auth_mode everywhere: auth_mode none sends no stored token', async () => {
    const server = await registerServer(gateway, {
      server_key: 'unauthed',
      base_url: configured.url,
      auth_config: { token: 'kept-but-unused' },
    });
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${server.server_id}`, { auth_mode: 'none' });
    const key = await createKey(gateway);
    await adminOk(gateway, 'POST', '/ui/api/mcp-bindings', {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
    });
    const seen = configured.requests.length;
    expect((await callTool(gateway.baseUrl, key.key, 'unauthed.echo', { text: 'x' })).result).toBeDefined();
    const report = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${server.server_id}/health-check`);
    expect(report.ok).toBe(true);
    const sent = configured.requests.slice(seen);
    expect(sent.map((entry) => entry.body?.method)).toEqual(
      expect.arrayContaining(['tools/call', 'initialize', 'tools/list']),
    );
    for (const entry of sent) expect(entry.headers.authorization, entry.body?.method).toBeUndefined();
  });

  it('refreshes capabilities on demand', async () => {
    const server = await registerServer(gateway, { server_key: 'refreshing', base_url: configured.url });
    const refreshed = await adminOk(
      gateway,
      'POST',
      `/ui/api/mcp-servers/${server.server_id}/refresh-capabilities`,
    );
    expect(refreshed).toMatchObject({
      ok: true,
      tool_count: 5,
      server: { tool_count: 5, last_refresh_error: null },
    });
    expect(refreshed.server.tools_refreshed_at).not.toBeNull();
  });

  it('bootstraps servers from mcp_servers at start (the LiteLLM map form, http normalized)', async () => {
    const servers = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers?limit=500')).data;
    const boot = servers.find((server: any) => server.server_key === 'boot');
    expect(boot).toMatchObject({
      source: 'config',
      transport: 'streamable_http',
      forwarded_headers_allowlist: ['x-team'],
    });
    await waitFor(
      async () => (await adminOk(gateway, 'GET', `/ui/api/mcp-servers/${boot.server_id}`)).tool_count === 5,
    );
    const key = await createKey(gateway);
    await adminOk(gateway, 'POST', '/ui/api/mcp-bindings', {
      server_id: boot.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
    });
    expect(
      (await callTool(gateway.baseUrl, key.key, 'boot.echo', { text: 'boot' })).result.content[0].text,
    ).toBe('boot');
  });

  it('deletes a server with its bindings and policies', async () => {
    const server = await registerServer(gateway, { server_key: 'doomed', base_url: configured.url });
    const key = await createKey(gateway);
    await adminOk(gateway, 'POST', '/ui/api/mcp-bindings', {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
    });
    expect((await callTool(gateway.baseUrl, key.key, 'doomed.echo', { text: 'x' })).result).toBeDefined();
    expect(await adminOk(gateway, 'DELETE', `/ui/api/mcp-servers/${server.server_id}`)).toEqual({
      deleted: true,
      server_id: server.server_id,
    });
    expect((await adminOk(gateway, 'GET', `/ui/api/mcp-bindings?server_id=${server.server_id}`)).total).toBe(
      0,
    );
    expect((await callTool(gateway.baseUrl, key.key, 'doomed.echo', { text: 'x' })).error.code).toBe(-32004);
  });

  it('lets an admin user manage MCP with their own key, and refuses a member', async () => {
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'mcp-admin', role: 'admin' });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'mcp-member', role: 'member' });
    const adminKey = await createKey(gateway, { user_id: 'mcp-admin' });
    const memberKey = await createKey(gateway, { user_id: 'mcp-member' });
    const as = (key: string) =>
      fetch(`${gateway.baseUrl}/ui/api/mcp-servers`, { headers: { authorization: `Bearer ${key}` } });
    expect((await as(adminKey.key)).status).toBe(200);
    expect((await as(memberKey.key)).status).toBe(403);
  });

  it('requires the master key or an admin user on every MCP admin route of the spec', async () => {
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'mcp-outsider', role: 'member' });
    const memberKey = await createKey(gateway, { user_id: 'mcp-outsider' });
    const plainKey = await createKey(gateway);
    const server = await registerServer(gateway, { server_key: 'guarded', base_url: configured.url });
    const id = server.server_id;
    const routes = [
      ['GET', '/ui/api/mcp-servers'],
      ['POST', '/ui/api/mcp-servers'],
      ['GET', `/ui/api/mcp-servers/${id}`],
      ['GET', `/ui/api/mcp-servers/${id}/operations`],
      ['PATCH', `/ui/api/mcp-servers/${id}`],
      ['DELETE', `/ui/api/mcp-servers/${id}`],
      ['POST', `/ui/api/mcp-servers/${id}/refresh-capabilities`],
      ['POST', `/ui/api/mcp-servers/${id}/health-check`],
      ['GET', '/ui/api/mcp-bindings'],
      ['POST', '/ui/api/mcp-bindings'],
      ['DELETE', '/ui/api/mcp-bindings/mcpb_x'],
      ['GET', '/ui/api/mcp-tool-policies'],
      ['POST', '/ui/api/mcp-tool-policies'],
      ['DELETE', '/ui/api/mcp-tool-policies/mcpp_x'],
      ['GET', '/ui/api/mcp-approval-requests'],
      ['POST', '/ui/api/mcp-approval-requests/apr_x/decision'],
    ] as const;
    for (const [method, path] of routes) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : '{}';
      const send = (authorization?: string) =>
        fetch(gateway.baseUrl + path, {
          method,
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body } : {}),
        }).then((response) => response.status);
      expect(await send(), `${method} ${path} without a key`).toBe(401);
      expect(await send(`Bearer ${memberKey.key}`), `${method} ${path} as a member`).toBe(403);
      expect(await send(`Bearer ${plainKey.key}`), `${method} ${path} with a plain key`).toBe(403);
    }
    expect((await adminOk(gateway, 'GET', `/ui/api/mcp-servers/${id}`)).server_key).toBe('guarded');
  });
});

/** Polls for an event; the deadline guards one that never comes (a loaded machine only slows it). */
async function waitFor(condition: () => Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
