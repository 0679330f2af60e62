/**
 * JSON-RPC envelopes at /mcp, fuzzed (issue 18): arbitrary JSON values, envelopes with every member
 * wrong in turn (jsonrpc, id, method, params), known methods with arbitrary params, and batches of
 * them answer either JSON-RPC (HTTP 200, each answer with `jsonrpc: "2.0"` and a `result` or an
 * `error` whose code is an integer and whose message is a string; 202 with no body when everything
 * was a notification) or a 4xx: never a 5xx, never a crash. An upstream MCP server with tools is
 * bound so that tools/call reaches argument validation and the executor.
 * A failure prints its seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { fuzzParameters } from '../support/fuzz-parameters.ts';
import { bind, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const methods = fc.constantFrom(
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/initialized',
  'notifications/cancelled',
  'resources/list',
  'prompts/list',
  'completion/complete',
  'logging/setLevel',
  '',
  'rpc.discover',
  '__proto__',
);
const hostile = fc.constantFrom<unknown>('\u0000', '\ud800', 1e308, -0, '9'.repeat(400), [], {}, null);
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostile);
const toolParams = fc.record(
  {
    name: fc.oneof(
      fc.constantFrom('fuzz.echo', 'fuzz.add', 'fuzz.fail', 'missing.tool', 'echo', ''),
      anyValue,
    ),
    arguments: fc.oneof(fc.dictionary(fc.constantFrom('message', 'a', 'b', 'x'), anyValue), anyValue),
    _meta: anyValue,
  },
  { requiredKeys: [] },
);
const initializeParams = fc.record(
  {
    protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1.0'), anyValue),
    capabilities: anyValue,
    clientInfo: fc.oneof(fc.constant({ name: 'fuzz', version: '1' }), anyValue),
  },
  { requiredKeys: [] },
);
const envelope = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: anyValue }),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), anyValue),
    method: fc.oneof({ weight: 4, arbitrary: methods }, { weight: 1, arbitrary: anyValue }),
    params: fc.oneof(toolParams, initializeParams, anyValue),
  },
  { requiredKeys: [] },
);
const message = fc.oneof({ weight: 5, arbitrary: envelope }, { weight: 1, arbitrary: anyValue });
const body = fc.oneof(
  { weight: 3, arbitrary: message.map((value) => JSON.stringify(value) ?? 'null') },
  { weight: 2, arbitrary: fc.array(message, { maxLength: 6 }).map((batch) => JSON.stringify(batch)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '{', '[', '[{"jsonrpc":"2.0"', '\u0000', `${'['.repeat(5000)}`),
  },
);

function expectJsonRpcAnswer(answer: unknown): void {
  expect(answer).toBeTypeOf('object');
  const { jsonrpc, result, error } = answer as { jsonrpc?: unknown; result?: unknown; error?: any };
  expect(jsonrpc).toBe('2.0');
  if (error === undefined) expect(result).toBeDefined();
  else {
    expect(Number.isInteger(error.code), JSON.stringify(error)).toBe(true);
    expect(error.message).toBeTypeOf('string');
  }
}

describe('/mcp JSON-RPC envelopes under arbitrary input (issue 18: JSON-RPC error or 4xx, never 5xx)', () => {
  let backend: Backend;
  let tools: FakeMcpServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    tools = await startFakeMcpServer({ mode: 'stateless' });
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
    const server = await registerServer(gateway, { server_key: 'fuzz', base_url: tools.url });
    const created = await createKey(gateway);
    key = created.key;
    await bind(gateway, { server_id: server.server_id, scope_type: 'api_key', scope_id: created.keyId });
  });
  afterAll(async () => {
    await gateway?.close();
    await tools?.close();
    await backend?.cleanup();
  });

  it('answers every body with JSON-RPC (200 or 202) or a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (text, withKey) => {
        const response = await gateway.gateway.app.inject({
          method: 'POST',
          url: '/mcp',
          headers: {
            authorization: `Bearer ${withKey ? key : gateway.masterKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          payload: text,
        });
        const context = `${response.statusCode} ${response.body.slice(0, 300)}`;
        expect(response.statusCode, context).toBeLessThan(500);
        if (response.statusCode === 202) {
          expect(response.body).toBe('');
          return;
        }
        if (response.statusCode >= 400) return;
        expect(response.statusCode, context).toBe(200);
        const answer = response.headers['content-type']?.includes('text/event-stream')
          ? JSON.parse(/^data: (.*)$/m.exec(response.body)?.[1] ?? 'null')
          : response.json();
        for (const one of Array.isArray(answer) ? answer : [answer]) expectJsonRpcAnswer(one);
      }),
      fuzzParameters(250),
    );
  }, 60_000);
});
