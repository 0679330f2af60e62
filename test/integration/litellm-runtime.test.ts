/**
 * LiteLLM configuration files behave at run time as they do under LiteLLM (issue 10), proven with a
 * recording fake upstream: what the gateway sends is asserted, not only that it starts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/litellm-runtime/${name}`, import.meta.url), 'utf8');

describe('litellm_settings fallbacks at run time', () => {
  it('falls back as router_settings.fallbacks would (it answered 502 before)', async () => {
    const bad = await FakeOpenAiServer.start();
    const good = await FakeOpenAiServer.start();
    bad.defaultScenario = { kind: 'error', status: 503 };
    const backend = sqliteBackend();
    const gateway = await startTestGateway({
      backend,
      yaml: fixture('litellm-settings-fallbacks.yaml')
        .replace('BAD_URL', bad.baseUrl)
        .replace('GOOD_URL', good.baseUrl),
    });
    try {
      const key = await gateway.createKey();
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'primary', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(bad.requests).toHaveLength(1); // num_retries: 0 from litellm_settings
      expect(good.requests.map((request) => [request.body.model, request.headers.authorization])).toEqual([
        ['gpt-4o-mini', 'Bearer sk-good'],
      ]);
    } finally {
      await gateway.close();
      await bad.close();
      await good.close();
      await backend.cleanup();
    }
  });
});

describe('LiteLLM files at run time', () => {
  let upstream: FakeOpenAiServer;
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: fixture('ollama-bare-server.yaml').replace('OLLAMA_URL', upstream.origin),
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('sends an Ollama deployment whose api_base names only the server to /v1/chat/completions', async () => {
    const key = await gateway.createKey();
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-llama', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(upstream.requests.map((request) => [request.path, request.body.model])).toEqual([
      ['/v1/chat/completions', 'llama3.1'],
    ]);
  });
});
