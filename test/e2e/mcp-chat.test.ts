/**
 * MCP tools inside chat completions (issue 5), driven by the official `openai` SDK against a fake model
 * that calls tools: the gateway offers the visible MCP tools as functions, runs the model's calls
 * through the MCP policy path, feeds results back and returns the final answer; every request the
 * loop cannot serve is refused with 400 before any provider call.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { bind, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const models = `
model_list:
  - model_name: tooly
    params: { provider: fake, model: tooly, tool_calls: auto, tool_arguments: { text: from the model } }
  - model_name: adder
    params: { provider: fake, model: adder, tool_calls: auto, tool_arguments: { a: 2, b: 40 } }
  - model_name: broken
    params: { provider: fake, model: broken, fail_rate: 1, fail_status: 500 }
`;

describe('MCP tools in chat completions', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  let client: OpenAI;
  let serverId: string;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, yaml: models });
    upstream = await startFakeMcpServer({ mode: 'stateful' });
    serverId = (await registerServer(gateway, { server_key: 'alpha', base_url: upstream.url })).server_id;
    const key = await createKey(gateway);
    await bind(gateway, {
      server_id: serverId,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo', 'add', 'fail', 'slow'],
    });
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'slow',
      scope_type: 'api_key',
      scope_id: key.keyId,
      require_approval: 'manual',
    });
    client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  const mcp = (extra: Record<string, unknown> = {}) =>
    ({ type: 'mcp', server: 'alpha', require_approval: 'never', ...extra }) as any;

  it('runs the model’s MCP tool call and returns the answer built on its result', async () => {
    const before = upstream.calls('echo').length;
    const answer = await client.chat.completions.create({
      model: 'tooly',
      messages: [{ role: 'user', content: 'Use the echo tool.' }],
      tools: [mcp({ allowed_tools: ['echo'] })],
    });
    expect(answer.choices[0]!.message.content).toBe('Tool result: from the model');
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(answer.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(
      upstream
        .calls('echo')
        .slice(before)
        .map((call) => call.body.params.arguments),
    ).toEqual([{ text: 'from the model' }]);
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(10);
  });

  it('runs MCP tools for /v1/responses requests too (spec proxy rule 1), and refuses them on streams', async () => {
    const before = upstream.calls('echo').length;
    const response = await client.responses.create({
      model: 'tooly',
      input: 'Use the echo tool.',
      tools: [
        { type: 'mcp', server_label: 'alpha', allowed_tools: ['echo'], require_approval: 'never' } as any,
      ],
    });
    expect(response.output_text).toBe('Tool result: from the model');
    expect(upstream.calls('echo').length).toBe(before + 1);
    const streamed = await client.responses
      .create({ model: 'tooly', input: 'x', stream: true, tools: [mcp({ allowed_tools: ['echo'] })] })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect(upstream.calls('echo').length).toBe(before + 1);
  });

  it('offers the tools under aliases the model may use, and maps the call back to server_key.tool_name', async () => {
    const before = upstream.calls('add').length;
    const answer = await client.chat.completions.create({
      model: 'adder',
      messages: [{ role: 'user', content: 'Add.' }],
      tools: [mcp({ allowed_tools: ['add'] })],
    });
    expect(answer.choices[0]!.message.content).toBe('Tool result: 42');
    expect(upstream.calls('add').length).toBe(before + 1);
  });

  it('feeds a tool error back to the model instead of failing the request', async () => {
    const answer = await client.chat.completions.create({
      model: 'tooly',
      messages: [{ role: 'user', content: 'Try.' }],
      tools: [mcp({ allowed_tools: ['fail'] })],
    });
    expect(answer.choices[0]!.message.content).toBe('Tool result: Tool error: the tool failed on purpose');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['streaming with an MCP tool', { stream: true, tools: [mcp({ allowed_tools: ['echo'] })] }, 'tools'],
    ['an unknown server', { tools: [mcp({ server: 'nope' })] }, 'tools[0].server'],
    [
      'a tool outside the visible ones',
      { tools: [mcp({ allowed_tools: ['nodesc'] })] },
      'tools[0].allowed_tools',
    ],
    [
      'a tool that needs a manual approval',
      { tools: [mcp({ allowed_tools: ['echo', 'slow'] })] },
      'tools[0]',
    ],
    [
      'require_approval other than never',
      { tools: [mcp({ require_approval: 'always' })] },
      'tools[0].require_approval',
    ],
  ])('refuses %s with 400 before any provider call', async (_rule, body, param) => {
    const before = upstream.calls().length;
    const error = await client.chat.completions
      .create({ model: 'broken', messages: [{ role: 'user', content: 'x' }], ...(body as object) } as any)
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
    expect(upstream.calls().length).toBe(before);
  });

  it('admits a request with MCP tools once: all its model turns run inside that one admission', async () => {
    const limited = await createKey(gateway, { rpm_limit: 1 });
    await bind(gateway, {
      server_id: serverId,
      scope_type: 'api_key',
      scope_id: limited.keyId,
      tool_allowlist: ['echo'],
    });
    const limitedClient = new OpenAI({
      baseURL: `${gateway.baseUrl}/v1`,
      apiKey: limited.key,
      maxRetries: 0,
    });
    const ask = () =>
      limitedClient.chat.completions.create({
        model: 'tooly',
        messages: [{ role: 'user', content: 'Use the echo tool.' }],
        tools: [mcp({ allowed_tools: ['echo'] })],
      });
    expect((await ask()).choices[0]!.message.content).toBe('Tool result: from the model');
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('forwards the caller’s allowlisted headers to the MCP server on chat tool calls, and no others', async () => {
    const server = await registerServer(gateway, {
      server_key: 'tenant',
      base_url: upstream.url,
      forwarded_headers_allowlist: ['x-tenant-id'],
    });
    const key = await createKey(gateway);
    await bind(gateway, {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo'],
    });
    const tenantClient = new OpenAI({
      baseURL: `${gateway.baseUrl}/v1`,
      apiKey: key.key,
      maxRetries: 0,
      defaultHeaders: { 'x-tenant-id': 'acme', 'x-private': 'do-not-forward' },
    });
    const before = upstream.calls('echo').length;
    await tenantClient.chat.completions.create({
      model: 'tooly',
      messages: [{ role: 'user', content: 'Use the echo tool.' }],
      tools: [mcp({ server: 'tenant', allowed_tools: ['echo'] })],
    });
    const seen = upstream.calls('echo').slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['x-tenant-id']).toBe('acme');
    expect(seen[0]!.headers['x-private']).toBeUndefined();
  });

  it('stops after mcp_tool_loop_max_iterations model turns, the last one without MCP tools', async () => {
    const boundedBackend = sqliteBackend();
    const bounded = await startTestGateway({
      backend: boundedBackend,
      yaml: models,
      generalSettings: '  mcp_tool_loop_max_iterations: 1\n',
    });
    try {
      const server = await registerServer(bounded, { server_key: 'alpha', base_url: upstream.url });
      const key = await createKey(bounded);
      await bind(bounded, { server_id: server.server_id, scope_type: 'api_key', scope_id: key.keyId });
      const before = upstream.calls('echo').length;
      const answer = await new OpenAI({
        baseURL: `${bounded.baseUrl}/v1`,
        apiKey: key.key,
        maxRetries: 0,
      }).chat.completions.create({
        model: 'tooly',
        messages: [{ role: 'user', content: 'Use the echo tool.' }],
        tools: [mcp()],
      });
      expect(answer.choices[0]!.message.content).toBe('You said: Use the echo tool.');
      expect(upstream.calls('echo').length).toBe(before);
    } finally {
      await bounded.close();
      await boundedBackend.cleanup();
    }
  });
});
