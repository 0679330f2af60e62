/**
 * An answer too large for the gateway (M1 of the issue-13 review): 2048 inputs as floats make a server
 * answer ~78 MB, above the 64 MiB the gateway reads. That is the request's doing, so the caller gets a
 * 502 saying to ask for less, nothing is retried, and the deployment (allowed_fails: 1, the only one)
 * keeps serving. OpenAI deployments are asked for base64 instead, which the gateway turns into floats.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BYTES } from '../../src/providers/upstream-exchange.ts';
import { fakeUpstreamVector } from '../fakes/fake-openai-modalities.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('answers above the gateway read limit', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    const yaml = `
model_list:
  - model_name: vllm-embed
    params: { provider: hosted_vllm, model: up-embed, api_base: "BASE" }
    model_info: { id: vllm-embed-1, mode: embedding }
  - model_name: openai-embed
    params: { provider: openai, model: up-embed, api_base: "BASE", api_key: sk-up }
    model_info: { id: openai-embed-1, mode: embedding }
router_settings:
  num_retries: 2
  allowed_fails: 1
  cooldown_time: 60
`.replaceAll('"BASE"', `"${upstream.baseUrl}"`);
    gateway = await startTestGateway({ backend, yaml });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const embed = (body: object) =>
    fetch(`${gateway.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers 502 upstream_answer_too_large without retrying, and the deployment stays healthy', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      upstream.enqueue({ kind: 'oversized', bytes: MAX_RESPONSE_BYTES + 1024 });
      const response = await embed({ model: 'vllm-embed', input: ['a', 'b'], encoding_format: 'float' });
      expect(response.status).toBe(502);
      expect(response.headers.get('x-should-retry')).toBe('false');
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('upstream_answer_too_large');
      expect(error.message).toMatch(/fewer inputs.*base64/);
    }
    expect(upstream.requests).toHaveLength(2);
    // allowed_fails: 1 would have put the only deployment in cooldown after one counted failure.
    const healthy = await embed({ model: 'vllm-embed', input: 'a' });
    expect(healthy.status).toBe(200);
    expect(healthy.headers.get('x-switchboard-deployment')).toBe('vllm-embed-1');
  });

  it("passes the caller's float encoding to OpenAI-compatible servers, which may not answer base64", async () => {
    await embed({ model: 'vllm-embed', input: 'a', encoding_format: 'float' });
    expect(upstream.requests[0]!.body.encoding_format).toBe('float');
  });

  it('asks OpenAI for base64 when the caller wants floats, and answers the same floats', async () => {
    for (const encoding of ['float', undefined]) {
      upstream.reset();
      const response = await embed({
        model: 'openai-embed',
        input: ['hello', 'hi'],
        encoding_format: encoding,
      });
      expect(upstream.requests[0]!.body.encoding_format).toBe('base64');
      const answer = (await response.json()) as { data: Array<{ embedding: number[] }> };
      expect(answer.data.map((item) => item.embedding)).toEqual([
        fakeUpstreamVector('hello'),
        fakeUpstreamVector('hi'),
      ]);
    }
  });
});
