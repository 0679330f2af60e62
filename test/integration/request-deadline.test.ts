/**
 * The request deadline (general_settings.request_timeout_seconds) bounds routing and retries up to the
 * answer, or up to a stream's first chunk; a stream that keeps sending may outlive it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('the request deadline', () => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      generalSettings: '  request_timeout_seconds: 0.5\n',
      yaml: `
model_list:
  - { model_name: slow-answer, params: { provider: fake, model: a, latency_ms: 1500 } }
  - { model_name: long-stream, params: { provider: fake, model: b, response: "one two three four five six", chunk_delay_ms: 200 } }
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const chat = (model: string, stream: boolean) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'x' }] }),
    });

  it('answers 504 request_timeout when no answer comes within the deadline', async () => {
    const response = await chat('slow-answer', false);
    expect(response.status).toBe(504);
    expect(((await response.json()) as any).error.code).toBe('request_timeout');
  });

  it('lets a stream that keeps sending run past the deadline to [DONE]', async () => {
    const started = performance.now();
    const response = await chat('long-stream', true);
    const text = await response.text();
    expect(performance.now() - started).toBeGreaterThan(800);
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(text).toContain('"content":"six"');
  });
});
