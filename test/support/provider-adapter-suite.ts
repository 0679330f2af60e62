/**
 * One conformance suite for every upstream-backed ProviderAdapter (STYLE convention 13): each runs
 * against the fake OpenAI-wire server, and the suite asserts both what the adapter returned and what
 * the upstream received.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import type {
  ChatCapability,
  DeploymentSettings,
  ProviderAdapter,
  ProviderFactory,
} from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';

export interface AdapterCase {
  name: string;
  factory: ProviderFactory;
  /** Params for a deployment of upstream model `model` served by the fake at `origin`. */
  params(origin: string): Record<string, unknown>;
  /** The path the upstream must see. */
  expectedPath: string;
  /** Checks the authentication headers the upstream saw. */
  expectAuth(headers: Record<string, string | string[] | undefined>): void;
}

export function settingsFor(
  params: Record<string, unknown>,
  overrides: Partial<DeploymentSettings['timeouts']> = {},
  maxConnections = 8,
): DeploymentSettings {
  return {
    model: String(params.model),
    params,
    timeouts: {
      connectMs: 1_000,
      headersMs: 2_000,
      streamIdleMs: 2_000,
      totalMs: 5_000,
      poolMs: 1_000,
      ...overrides,
    },
    maxConnections,
  };
}

const request: ChatRequest = {
  model: 'upstream-model',
  messages: [{ role: 'user', content: 'hello there' }],
  temperature: 0.2,
  my_vendor_field: { keep: true },
};

const context = () => ({ signal: new AbortController().signal, requestId: 'req-1' });

export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

export async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

/** The chat capability of an adapter the suite drives, with its close (every adapter here serves chat). */
export function chatAdapterOf(adapter: ProviderAdapter): ChatCapability & { close(): Promise<void> } {
  const chat = adapter.chat;
  if (!chat) throw new Error('the adapter declares no chat capability');
  return {
    complete: (request, context) => chat.complete(request, context),
    stream: (request, context) => chat.stream(request, context),
    close: () => adapter.close(),
  };
}

export function runProviderAdapterSuite(adapterCase: AdapterCase): void {
  describe(`ProviderAdapter conformance: ${adapterCase.name}`, () => {
    let upstream: FakeOpenAiServer;
    let adapter: ReturnType<typeof chatAdapterOf>;
    const make = (overrides: Partial<DeploymentSettings['timeouts']> = {}, maxConnections = 8) =>
      chatAdapterOf(
        adapterCase.factory.create(
          settingsFor(adapterCase.params(upstream.origin), overrides, maxConnections),
        ),
      );

    beforeAll(async () => {
      upstream = await FakeOpenAiServer.start();
      adapter = make();
    });
    afterAll(async () => {
      await adapter?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    it('accepts its own params', () => {
      expect(adapterCase.factory.validate(adapterCase.params('http://127.0.0.1:1'))).toEqual([]);
    });

    it('sends the caller’s request with unknown fields, to the right path with the right credentials', async () => {
      const result = await adapter.complete(request, context());
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe(adapterCase.expectedPath);
      expect(seen.body).toMatchObject({
        model: 'upstream-model',
        temperature: 0.2,
        my_vendor_field: { keep: true },
      });
      adapterCase.expectAuth(seen.headers);
      expect(result.response.choices[0]?.message.content).toBe('echo: hello there');
      expect(result.response.usage?.total_tokens).toBeGreaterThan(0);
      expect(JSON.parse(result.json!)).toEqual(result.response);
    });

    it('streams chunks in order, ending with the usage chunk', async () => {
      upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
      const chunks = await collect(
        adapter.stream({ ...request, stream: true, stream_options: { include_usage: true } }, context()),
      );
      const text = chunks
        .map((chunk) => (chunk.usageOnly ? '' : (chunk.chunk.choices[0]?.delta.content ?? '')))
        .join('');
      expect(text).toBe('one two three');
      const last = chunks.at(-1)!;
      expect(last.usageOnly).toBe(true);
      expect(last.usage?.completion_tokens).toBe(3);
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true);
    });

    it('classifies 5xx, 408, 409 and 429 as retryable and 400, 401, 403, 404, 422 as not', async () => {
      for (const status of [500, 502, 503, 408, 409, 429]) {
        upstream.enqueue({ kind: 'error', status });
        expect((await failure(adapter.complete(request, context()))).retryable, String(status)).toBe(true);
      }
      for (const status of [400, 401, 403, 404, 422]) {
        upstream.enqueue({ kind: 'error', status });
        expect((await failure(adapter.complete(request, context()))).retryable, String(status)).toBe(false);
      }
    });

    it('reads Retry-After into milliseconds and keeps only a sanitized provider code, never the body', async () => {
      upstream.enqueue({
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '7' },
        code: 'rate_limit_exceeded',
      });
      const error = await failure(adapter.complete(request, context()));
      expect(error).toMatchObject({
        kind: 'status',
        status: 429,
        retryAfterMs: 7_000,
        providerCode: 'rate_limit_exceeded',
      });
      expect(JSON.stringify({ ...error, message: error.message })).not.toContain('sk-upstream-leak');
    });

    it('does not decompress an encoded error body', async () => {
      upstream.enqueue({ kind: 'error', status: 400, code: 'context_length_exceeded', gzip: true });
      const error = await failure(adapter.complete(request, context()));
      expect(error.status).toBe(400);
      expect(error.providerCode).toBeUndefined();
    });

    it('treats an answer that is not a chat completion as a protocol error', async () => {
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(adapter.complete(request, context()))).kind).toBe('protocol');
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(collect(adapter.stream({ ...request, stream: true }, context())))).kind).toBe(
        'protocol',
      );
    });

    it('fails a stream that breaks after some chunks', async () => {
      upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 2 });
      const received: StreamChunk[] = [];
      const error = await failure(
        (async () => {
          for await (const chunk of adapter.stream({ ...request, stream: true }, context()))
            received.push(chunk);
        })(),
      );
      expect(received).toHaveLength(2);
      expect(error.retryable).toBe(true);
    });

    it('times out an upstream that sends no headers, as a retryable timeout', async () => {
      const impatient = make({ headersMs: 150, totalMs: 150, streamIdleMs: 150 });
      upstream.enqueue({ kind: 'hang' });
      const error = await failure(impatient.complete(request, context()));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await impatient.close();
    });

    it('aborts the upstream request when the caller goes away', async () => {
      upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const pending = adapter.complete(request, { signal: controller.signal, requestId: 'r' });
      await waitUntil(() => upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => upstream.requests[0]!.aborted);
    });

    it('fails fast with pool_timeout when no connection frees up, without sending the request', async () => {
      const single = make({ poolMs: 100, headersMs: 5_000, totalMs: 5_000 }, 1);
      upstream.enqueue({ kind: 'hang' });
      const first = single.complete(request, context()).catch(() => undefined);
      await waitUntil(() => upstream.requests.length === 1);
      const error = await failure(single.complete(request, context()));
      expect(error).toMatchObject({ kind: 'pool_timeout', retryable: true });
      expect(upstream.requests).toHaveLength(1);
      await single.close();
      await first;
    });
  });
}

export async function waitUntil(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
