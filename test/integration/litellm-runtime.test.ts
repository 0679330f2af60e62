/**
 * LiteLLM configuration files behave at run time as they do under LiteLLM (issue 10), proven with a
 * recording fake upstream: what the gateway sends is asserted, not only that it starts.
 */
import { readFileSync } from 'node:fs';
import pino from 'pino';
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

describe('deployment defaults, extra headers and the Azure AD token at run time', () => {
  let upstream: FakeOpenAiServer;
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: fixture('deployment-defaults.yaml')
        .replace('UPSTREAM_URL', upstream.baseUrl)
        .replace('UPSTREAM_ORIGIN', upstream.origin),
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  const chat = (body: object) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
    });

  it('sends the deployment defaults the caller did not set, and never over the caller', async () => {
    upstream.reset();
    expect((await chat({ model: 'tuned' })).status).toBe(200);
    expect((await chat({ model: 'tuned', temperature: 1, max_completion_tokens: 9 })).status).toBe(200);
    const [plain, overridden] = upstream.requests;
    expect(plain!.body).toMatchObject({ temperature: 0.2, max_tokens: 256, seed: 7 });
    expect(plain!.headers['x-team']).toBe('blue');
    expect(overridden!.body).toMatchObject({ temperature: 1, max_completion_tokens: 9, seed: 7 });
    expect(overridden!.body.max_tokens).toBeUndefined(); // never both token limits in one request
  });

  it('sends azure_ad_token as a bearer token on the Azure deployment path', async () => {
    upstream.reset();
    expect((await chat({ model: 'azure-entra' })).status).toBe(200);
    const [request] = upstream.requests;
    expect(request!.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(request!.headers.authorization).toBe('Bearer entra-token');
    expect(request!.headers['api-key']).toBeUndefined();
  });
});

describe('model_info.mode at run time', () => {
  it('lists every group with its mode, and refuses a chat request to a non-chat group naming the endpoint', async () => {
    const backend = sqliteBackend();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const gateway = await startTestGateway({ backend, yaml: fixture('modes.yaml'), logger });
    expect(lines.join('')).toContain(
      'model groups by endpoint: /v1/chat/completions (and the other text endpoints): chatty; /v1/embeddings: embedder; listed but served by no endpoint: batcher (batch)',
    );
    try {
      const key = await gateway.createKey();
      const listed = (await (
        await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as any;
      expect(listed.data.map((model: any) => [model.id, model.mode])).toEqual([
        ['chatty', 'chat'],
        ['embedder', 'embedding'],
        ['batcher', 'batch'],
      ]);
      const refused = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'embedder', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error).toMatchObject({
        code: 'model_not_supported_by_endpoint',
        param: 'model',
      });
    } finally {
      await gateway.close();
      await backend.cleanup();
    }
  });
});

describe('wildcard model groups at run time', () => {
  it('routes names to the longest matching wildcard with the matched name upstream; exact groups win', async () => {
    const [prefixed, catchall, exact] = await Promise.all([
      FakeOpenAiServer.start(),
      FakeOpenAiServer.start(),
      FakeOpenAiServer.start(),
    ]);
    const backend = sqliteBackend();
    const gateway = await startTestGateway({
      backend,
      yaml: fixture('wildcards.yaml')
        .replace('PREFIXED_URL', prefixed.baseUrl)
        .replace('CATCHALL_URL', catchall.baseUrl)
        .replace('EXACT_URL', exact.baseUrl),
    });
    try {
      const key = await gateway.createKey();
      const chat = (model: string, bearer = key) =>
        fetch(`${gateway.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
        });
      for (const model of ['openai/gpt-4o', 'mistral-large', 'openai/special'])
        expect((await chat(model)).status).toBe(200);
      expect(prefixed.requests.map((request) => request.body.model)).toEqual(['gpt-4o']);
      expect(catchall.requests.map((request) => request.body.model)).toEqual(['mistral-large']);
      expect(exact.requests.map((request) => request.body.model)).toEqual(['gpt-4o-special']);
      const listed = (await (
        await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as any;
      expect(listed.data.map((model: any) => model.id)).toEqual(['openai/*', '*', 'openai/special']);
      // The key's model list applies to the name asked for, not to the wildcard.
      const narrow = await gateway.createKey({ models: ['openai/gpt-4o'] });
      expect((await chat('openai/gpt-4o', narrow)).status).toBe(200);
      expect((await chat('openai/gpt-4.1', narrow)).status).toBe(403);
    } finally {
      await gateway.close();
      await Promise.all([prefixed.close(), catchall.close(), exact.close()]);
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

  it('sends the key and address of a named credential', async () => {
    const other = await FakeOpenAiServer.start();
    const otherBackend = sqliteBackend();
    const credentialed = await startTestGateway({
      backend: otherBackend,
      yaml: fixture('credentials.yaml').replace('UPSTREAM_URL', other.baseUrl),
    });
    try {
      const key = await credentialed.createKey();
      const response = await fetch(`${credentialed.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'credentialed', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(other.requests.map((request) => request.headers.authorization)).toEqual([
        'Bearer sk-from-credential',
      ]);
    } finally {
      await credentialed.close();
      await other.close();
      await otherBackend.cleanup();
    }
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
