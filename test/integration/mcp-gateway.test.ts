/**
 * The direct MCP gateway (issue 5) driven by the official SDK client and by raw JSON-RPC, in front of
 * two real SDK upstreams (stateful with SSE, stateless with JSON): visibility per scope and allowlist,
 * namespaced names, results passed through unchanged, and the JSON-RPC error table on both backends.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import {
  adminOk,
  bind,
  callTool,
  connectClient,
  createKey,
  registerServer,
  rpc,
} from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('the MCP gateway on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let stateful: FakeMcpServer;
  let stateless: FakeMcpServer;
  let alpha: any;
  let beta: any;
  let key: { key: string; keyId: string };
  let client: Client;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    [stateful, stateless] = await Promise.all([
      startFakeMcpServer({ mode: 'stateful' }),
      startFakeMcpServer({ mode: 'stateless' }),
    ]);
    alpha = await registerServer(gateway, { server_key: 'alpha', base_url: stateful.url, transport: 'http' });
    beta = await registerServer(gateway, { server_key: 'beta', base_url: stateless.url });
    key = await createKey(gateway, { key_name: 'mcp' });
    await bind(gateway, { server_id: alpha.server_id, scope_type: 'api_key', scope_id: key.keyId });
    await bind(gateway, {
      server_id: beta.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['add', 'fail'],
    });
    client = await connectClient(gateway.baseUrl, key.key);
  });
  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await Promise.all([stateful?.close(), stateless?.close()]);
    await backend?.cleanup();
  });

  it('lists exactly the visible tools of several upstreams, namespaced, each with a description and inputSchema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'alpha.add',
      'alpha.echo',
      'alpha.fail',
      'alpha.nodesc',
      'alpha.slow',
      'beta.add',
      'beta.fail',
    ]);
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(tools.find((tool) => tool.name === 'alpha.echo')?.inputSchema).toMatchObject({
      required: ['text'],
    });
  });

  it('calls tools on a stateful SSE upstream and a stateless JSON upstream, returning results unchanged', async () => {
    expect(await client.callTool({ name: 'alpha.echo', arguments: { text: 'hi' } })).toEqual({
      content: [{ type: 'text', text: 'hi' }],
    });
    expect(await client.callTool({ name: 'beta.add', arguments: { a: 2, b: 3 } })).toEqual({
      content: [{ type: 'text', text: '5' }],
      structuredContent: { sum: 5 },
    });
    expect(await client.callTool({ name: 'beta.fail', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'the tool failed on purpose' }],
      isError: true,
    });
    expect(stateful.calls('echo')[0]?.body.params).toEqual({ name: 'echo', arguments: { text: 'hi' } });
  });

  it('answers ping with exactly {}', async () => {
    const answer = await rpc(gateway.baseUrl, key.key, { jsonrpc: '2.0', id: 'p', method: 'ping' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
  });

  it('negotiates the protocol version: echoes 2025-03-26 and 2025-06-18, answers 2025-06-18 to others', async () => {
    const initialize = (protocolVersion: string) =>
      rpc(gateway.baseUrl, key.key, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
    expect((await initialize('2025-03-26')).body.result.protocolVersion).toBe('2025-03-26');
    const latest = await initialize('2025-06-18');
    expect(latest.body.result).toMatchObject({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'switchboard' },
    });
    expect(latest.headers.get('content-type')).toContain('application/json');
    expect(latest.headers.get('mcp-session-id')).toBeNull();
    expect((await initialize('2099-01-01')).body.result.protocolVersion).toBe('2025-06-18');
  });

  it('answers notifications with 202 and no body', async () => {
    const answer = await rpc(gateway.baseUrl, key.key, {
      jsonrpc: '2.0',
      method: 'notifications/initialized',
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toBeUndefined();
  });

  it('answers GET /mcp with 405 (no server-initiated streams)', async () => {
    const response = await fetch(`${gateway.baseUrl}/mcp`, {
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it.each([
    ['-32700 for a body that is not JSON', '{"jsonrpc": "2.0",', -32700],
    ['-32600 for a message without jsonrpc 2.0', { id: 1, method: 'ping' }, -32600],
    ['-32600 for a method that is not a string', { jsonrpc: '2.0', id: 1, method: 7 }, -32600],
    // Issue 9 (spec: -32602 Invalid params): params of the wrong type are invalid params.
    [
      '-32602 for params that are not an object',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' },
      -32602,
    ],
    [
      '-32602 for tools/call whose params are an array',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['alpha.echo'] },
      -32602,
    ],
    ['-32601 for an unsupported method', { jsonrpc: '2.0', id: 1, method: 'resources/list' }, -32601],
    [
      '-32602 for tools/call without a name',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
      -32602,
    ],
    [
      '-32602 for arguments that are not an object',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'alpha.echo', arguments: [1] } },
      -32602,
    ],
    [
      '-32602 for initialize without protocolVersion',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      -32602,
    ],
  ])('answers %s, as HTTP 200', async (_rule, body, code) => {
    const answer = await rpc(gateway.baseUrl, key.key, body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code } });
  });

  it('answers -32602 when the arguments do not match the inputSchema, without calling the upstream', async () => {
    const before = stateful.calls('echo').length;
    const answer = await callTool(gateway.baseUrl, key.key, 'alpha.echo', { text: 5 });
    expect(answer.error.code).toBe(-32602);
    expect(answer.error.message).toContain('inputSchema');
    expect(stateful.calls('echo').length).toBe(before);
  });

  it('answers -32004 for an unknown tool, an unknown server, a bare name and a tool outside the allowlist', async () => {
    for (const name of ['alpha.nope', 'gamma.echo', 'echo', 'beta.echo']) {
      expect((await callTool(gateway.baseUrl, key.key, name)).error.code, name).toBe(-32004);
    }
  });

  it('answers a batch with one response per request and none for notifications', async () => {
    const answer = await rpc(gateway.baseUrl, key.key, [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ]);
    expect(answer.body).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: expect.objectContaining({ code: -32601 }) },
    ]);
  });

  it('refuses an unsupported MCP-Protocol-Version header with 400', async () => {
    const answer = await rpc(
      gateway.baseUrl,
      key.key,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      {
        'mcp-protocol-version': '1999-01-01',
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(-32600);
    const accepted = await rpc(
      gateway.baseUrl,
      key.key,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      {
        'mcp-protocol-version': '2025-03-26',
      },
    );
    expect(accepted.status).toBe(200);
  });

  it('refuses a foreign Host or Origin with 403 before authentication (DNS-rebinding protection)', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await rpc(gateway.baseUrl, key.key, ping, { origin: 'http://evil.example.com' })).status).toBe(
      403,
    );
    expect((await rpc(gateway.baseUrl, undefined, ping, { origin: 'http://evil.example.com' })).status).toBe(
      403,
    );
    expect((await rpc(gateway.baseUrl, key.key, ping, { origin: 'http://localhost:6274' })).status).toBe(200);
    const withHost = async (host: string) =>
      (
        await request(`${gateway.baseUrl}/mcp`, {
          method: 'POST',
          headers: { host, 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
          body: JSON.stringify(ping),
        })
      ).statusCode;
    expect(await withHost('evil.example.com')).toBe(403);
    expect(await withHost('evil.example.com:80')).toBe(403);
    expect(await withHost(`localhost:${new URL(gateway.baseUrl).port}`)).toBe(200);
  });

  it('answers 401 without a valid API key', async () => {
    const answer = await rpc(gateway.baseUrl, 'sk-wrong', { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('shows a key nothing when no binding covers it, and follows bindings by team and organization', async () => {
    await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: 'org-vis' });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-vis', organization_id: 'org-vis' });
    const teamKey = await createKey(gateway, { team_id: 'team-vis' });
    const list = async () =>
      (
        await rpc(gateway.baseUrl, teamKey.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
      ).body.result.tools.map((tool: { name: string }) => tool.name);
    expect(await list()).toEqual([]);
    expect((await callTool(gateway.baseUrl, teamKey.key, 'alpha.echo', { text: 'x' })).error.code).toBe(
      -32004,
    );
    await bind(gateway, {
      server_id: beta.server_id,
      scope_type: 'organization',
      scope_id: 'org-vis',
      tool_allowlist: ['echo'],
    });
    expect(await list()).toEqual(['beta.echo']);
    const teamBinding = await bind(gateway, {
      server_id: alpha.server_id,
      scope_type: 'team',
      scope_id: 'team-vis',
      tool_allowlist: ['add'],
    });
    expect((await list()).sort()).toEqual(['alpha.add', 'beta.echo']);
    await bind(gateway, {
      server_id: alpha.server_id,
      scope_type: 'team',
      scope_id: 'team-vis',
      enabled: false,
    });
    expect(await list()).toEqual(['beta.echo']);
    await adminOk(gateway, 'DELETE', `/ui/api/mcp-bindings/${teamBinding.binding_id}`);
    expect(
      (await callTool(gateway.baseUrl, teamKey.key, 'beta.echo', { text: 'org' })).result.content[0].text,
    ).toBe('org');
  });

  it('hides every tool of a disabled server', async () => {
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${beta.server_id}`, { enabled: false });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names.some((name) => name.startsWith('beta.'))).toBe(false);
    expect((await callTool(gateway.baseUrl, key.key, 'beta.add', { a: 1, b: 1 })).error.code).toBe(-32004);
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${beta.server_id}`, { enabled: true });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('beta.add');
  });
});
