/**
 * Hostile input and broken upstreams on the translated text endpoints (issue 11): every decoder
 * answers a clear 4xx in its own error shape with nothing sent upstream, and a stream that breaks after
 * content ends with an in-band error and without its terminal marker, so the caller knows it is
 * incomplete; another caller is served meanwhile.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('text endpoints under hostile input', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: m, params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" } }
`,
      generalSettings: '  max_request_body_bytes: 65536\n',
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const post = (path: string, body: string, contentType = 'application/json') =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      body,
    });

  const valid: Record<string, object> = {
    '/v1/completions': { model: 'm', prompt: 'x' },
    '/v1/responses': { model: 'm', input: 'x' },
    '/v1/messages': { model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
  };

  /** Reads the error code and the shape: OpenAI's envelope, or Anthropic's on /v1/messages. */
  async function errorOf(response: Response, path: string): Promise<{ status: number; type: string }> {
    const body = (await response.json()) as any;
    if (path === '/v1/messages') {
      expect(body.type).toBe('error');
      return { status: response.status, type: body.error.type };
    }
    return { status: response.status, type: body.error.type };
  }

  it.each(Object.keys(valid))(
    '%s: deep nesting, NUL-laden and broken JSON, huge bodies and text/plain are 4xx',
    async (path) => {
      const hostile: Array<[string, string, number]> = [
        [
          JSON.stringify({ ...valid[path], metadata: 'x' }).replace('"x"}', `${nested(5_000)}}`),
          'application/json',
          400,
        ],
        ['{"model": "m", ', 'application/json', 400],
        [JSON.stringify({ ...valid[path], model: 'm\u0000' }), 'application/json', 404],
        [JSON.stringify({ ...valid[path], pad: 'x'.repeat(70_000) }), 'application/json', 413],
        [JSON.stringify(valid[path]), 'text/plain', 415],
        ['[1, 2, 3]', 'application/json', 400],
        [JSON.stringify({ ...valid[path], model: 7 }), 'application/json', 400],
      ];
      for (const [body, type, status] of hostile) {
        const response = await post(path, body, type);
        const error = await errorOf(response, path);
        expect(error.status, `${path} ${body.slice(0, 40)} ${type}`).toBe(status);
      }
      expect(upstream.requests).toHaveLength(0);
      const served = await post(
        '/v1/chat/completions',
        JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'still here' }] }),
      );
      expect(served.status).toBe(200);
    },
  );

  it.each([
    ['/v1/completions', (text: string) => !text.includes('[DONE]'), /"error":\{/],
    [
      '/v1/responses',
      (text: string) => !text.includes('[DONE]') && !text.includes('response.completed'),
      /event: response\.failed[\s\S]*event: error/,
    ],
    [
      '/v1/messages',
      (text: string) => !text.includes('message_stop'),
      /event: error\ndata: \{"type":"error"/,
    ],
  ] as const)(
    '%s: a stream that breaks after content ends with its error event and no terminal marker',
    async (path, noMarker, errorEvent) => {
      upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 2 });
      const response = await post(path, JSON.stringify({ ...valid[path], stream: true }));
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('part0');
      expect(text).toMatch(errorEvent);
      expect(noMarker(text)).toBe(true);
    },
  );
});
