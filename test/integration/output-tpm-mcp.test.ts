/**
 * Output-token accounting of an MCP tool loop (spec output rules 3 and 5): one admission covers every
 * model turn, and each turn's output is recorded, so the answer's remaining capacity is the limit less
 * the output of all turns (the loop's summed usage), not of the last one only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { bind, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

describe.runIf(await realBackendsAvailable())('output tokens of an MCP tool loop', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;

  beforeAll(async () => {
    backend = postgresBackend();
    gateway = await startTestGateway({
      backend,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
      yaml: `model_list:
  - { model_name: tooly, params: { provider: fake, model: tooly, tool_calls: auto, tool_arguments: { text: from the model } } }
`,
    });
    upstream = await startFakeMcpServer({ mode: 'stateful' });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('records every model turn of the loop inside its one admission', async () => {
    const { server_id: serverId } = await registerServer(gateway, {
      server_key: 'alpha',
      base_url: upstream.url,
    });
    const key = await createKey(gateway, { output_tpm_limit: 1000 });
    await bind(gateway, {
      server_id: serverId,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo'],
    });
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tooly',
        messages: [{ role: 'user', content: 'Use the echo tool.' }],
        tools: [{ type: 'mcp', server: 'alpha', allowed_tools: ['echo'], require_approval: 'never' }],
      }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as any;
    expect(answer.choices[0].message.content).toBe('Tool result: from the model');
    const lastTurn = answer.choices[0].message.content.split(/\s+/).length;
    const allTurns = answer.usage.completion_tokens as number;
    expect(allTurns).toBeGreaterThan(lastTurn);
    expect(response.headers.get('x-ratelimit-remaining-output-tokens')).toBe(String(1000 - allTurns));
  });
});
