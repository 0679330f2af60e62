/**
 * Hostile input never hurts another caller (issue 9). A body nested 5,000 levels deep once made the
 * OpenAI adapter's serializer throw; the failure was taken for the upstream's, retried and counted
 * until the deployment cooled down for every tenant. Bodies are now bounded in depth where they are
 * decoded: a clear 400 for the sender, nothing sent upstream, nothing stored, everyone else served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/lib/json-depth.ts';
import { MAX_BATCH_ANSWER_BYTES } from '../../src/mcp/mcp-gateway.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { bind, createKey, registerServer, rpc } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('deeply nested input', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let tools: FakeMcpServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    tools = await startFakeMcpServer({
      mode: 'stateless',
      extraTools: { big: 'Answers `bytes` characters.' },
    });
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: shared, params: { provider: openai, model: m, api_base: "${upstream.baseUrl}" }, model_info: { id: shared-1 } }
router_settings: { allowed_fails: 1, num_retries: 2 }
`,
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await tools?.close();
    await backend?.cleanup();
  });

  const post = (path: string, body: string, bearer = key) =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body,
    });

  /** A raw JSON-RPC body to /mcp (the SDK would not send hostile ones). */
  const postMcp = (bearer: string, body: string) =>
    fetch(`${gateway.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body,
    });

  it('answers 400 json_too_deep naming the limit, sends nothing upstream, and keeps the model up for others', async () => {
    const hostile = `{"model":"shared","messages":[{"role":"user","content":"hi"}],"x":${nested(5_000)}}`;
    expect(hostile.length).toBeLessThan(11_000);
    for (let index = 0; index < 5; index++) {
      const response = await post('/v1/chat/completions', hostile);
      expect(response.status).toBe(400);
      const body = (await response.json()) as any;
      expect(body.error.code).toBe('json_too_deep');
      expect(body.error.message).toContain(String(MAX_JSON_DEPTH));
    }
    expect(upstream.requests).toHaveLength(0);
    const other = await gateway.createKey();
    const fine = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'shared', messages: [{ role: 'user', content: 'hi' }] }),
      other,
    );
    expect(fine.status).toBe(200);
    const health = (await (await fetch(`${gateway.baseUrl}/health/deployments`)).json()) as any;
    expect(JSON.stringify(health)).toContain('"cooling_down_until":null');
    expect(JSON.stringify(health)).not.toMatch(/"cooling_down_until":"/);
  });

  it('accepts a body nested to the limit', async () => {
    const inner = nested(MAX_JSON_DEPTH - 3);
    const response = await post(
      '/v1/chat/completions',
      `{"model":"shared","messages":[{"role":"user","content":"hi"}],"metadata_extra":${inner}}`,
    );
    expect(response.status).toBe(200);
  });

  it('refuses deep key metadata with 400 and stores no key', async () => {
    const before = (await gateway.admin('GET', '/ui/api/keys')).body.total;
    const response = await fetch(`${gateway.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.masterKey}`, 'content-type': 'application/json' },
      body: `{"key_name":"deep","metadata":{"a":${nested(5_000)}}}`,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.code).toBe('json_too_deep');
    const after = await gateway.admin('GET', '/ui/api/keys');
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(before);
  });

  it('bounds the total answer bytes of one MCP batch: calls past the bound get -32005', async () => {
    const server = await registerServer(gateway, { server_key: 'bulk', base_url: tools.url });
    const caller = await createKey(gateway);
    await bind(gateway, { server_id: server.server_id, scope_type: 'api_key', scope_id: caller.keyId });
    const bytes = 3 * 1024 * 1024;
    const batch = Array.from({ length: 20 }, (_, index) => ({
      jsonrpc: '2.0',
      id: index,
      method: 'tools/call',
      params: { name: 'bulk.big', arguments: { bytes } },
    }));
    const response = await postMcp(caller.key, JSON.stringify(batch));
    const text = await response.text();
    const answers = JSON.parse(text) as any[];
    expect(answers).toHaveLength(20);
    const served = answers.filter((answer) => answer.result);
    const refused = answers.filter((answer) => answer.error);
    expect(served.length * bytes).toBeLessThanOrEqual(MAX_BATCH_ANSWER_BYTES);
    expect(served.length).toBeGreaterThan(0);
    for (const answer of refused) expect(answer.error.code).toBe(-32005);
    expect(new Set(answers.map((answer) => answer.id)).size).toBe(20); // every call answered once
    expect(text.length).toBeLessThan(MAX_BATCH_ANSWER_BYTES + 1024 * 1024);
    // The bound stops calls from starting once it is spent: far fewer than 20 reached the upstream.
    expect(tools.calls('big').length).toBeLessThan(20);
  });

  it('answers -32602 to MCP tool arguments nested too deep, and keeps serving the tool', async () => {
    const server = await registerServer(gateway, { server_key: 'deep', base_url: tools.url });
    const caller = await createKey(gateway);
    await bind(gateway, { server_id: server.server_id, scope_type: 'api_key', scope_id: caller.keyId });
    const hostile = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deep.echo","arguments":{"text":"x","extra":${nested(5_000)}}}}`;
    const response = await postMcp(caller.key, hostile);
    const answer = (await response.json()) as any;
    expect(answer).toMatchObject({ id: 7, error: { code: -32602 } });
    const fine = await rpc(gateway.baseUrl, caller.key, {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'deep.echo', arguments: { text: 'ok' } },
    });
    expect(fine.body.result).toBeDefined();
  });
});
