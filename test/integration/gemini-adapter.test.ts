/**
 * The `gemini` provider against a fake Gemini API upstream: the translating-adapter conformance suite,
 * then what only Gemini has (blocked prompts, safety stops, thinking, RetryInfo delays, no [DONE]),
 * hostile streams, and a LiteLLM-format config that names `gemini/<model>`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { geminiProvider } from '../../src/providers/gemini/index.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { FakeGeminiServer, readFixture } from '../fakes/gemini/fake-gemini-server.ts';
import { geminiRequestView } from '../fakes/gemini/gemini-request-view.ts';
import { chatAdapterOf, settingsFor } from '../support/provider-adapter-suite.ts';
import { runTranslatingAdapterSuite } from '../support/translating-adapter-suite.ts';

const params = (origin: string) => ({
  model: 'upstream-model',
  api_base: origin,
  api_key: 'gemini-test-key',
});

runTranslatingAdapterSuite({
  name: 'gemini',
  factory: geminiProvider,
  startUpstream: () => FakeGeminiServer.start(),
  params,
  expectEndpoint(seen, streaming) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe(
      streaming
        ? '/v1beta/models/upstream-model:streamGenerateContent?alt=sse'
        : '/v1beta/models/upstream-model:generateContent',
    );
    expect(seen.headers['x-goog-api-key']).toBe('gemini-test-key');
    expect(seen.headers.accept).toBe(streaming ? 'text/event-stream' : 'application/json');
  },
  view: geminiRequestView,
  expectedUsage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  keepsToolCallIds: false,
  sendsRetryAfter: true,
});

const simple: ChatRequest = { model: 'upstream-model', messages: [{ role: 'user', content: 'hi' }] };
const context = () => ({ signal: new AbortController().signal, requestId: 'req-9' });

async function collect(stream: AsyncIterable<StreamChunk>, into: StreamChunk[] = []): Promise<StreamChunk[]> {
  for await (const chunk of stream) into.push(chunk);
  return into;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

describe('gemini adapter: what only Gemini answers', () => {
  let upstream: FakeGeminiServer;
  let adapter: ReturnType<typeof chatAdapterOf>;

  beforeAll(async () => {
    upstream = await FakeGeminiServer.start();
    adapter = chatAdapterOf(
      geminiProvider.create(settingsFor({ ...params(upstream.origin), temperature: 0.9, top_k: 20 })),
    );
  });
  afterAll(async () => {
    await adapter?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('refuses a prompt the provider blocked, as a non-retryable 400 naming the reason', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'prompt-blocked.json' });
    const error = await failure(adapter.complete(simple, context()));
    expect(error).toMatchObject({
      kind: 'status',
      status: 400,
      retryable: false,
      message: 'the provider blocked the prompt',
      providerCode: 'prompt_blocked_PROHIBITED_CONTENT',
    });
  });

  it('refuses a blocked prompt on a stream the same way', async () => {
    const blocked = JSON.stringify(JSON.parse(readFixture('prompt-blocked.json')));
    upstream.enqueue({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      pieces: [`data: ${blocked}\r\n\r\n`],
    });
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
    expect(error).toMatchObject({
      status: 400,
      retryable: false,
      providerCode: 'prompt_blocked_PROHIBITED_CONTENT',
    });
  });

  it('maps a SAFETY-finished candidate to content_filter with the text it sent', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'safety-finish.json' });
    const { response } = await adapter.complete(simple, context());
    expect(response.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'I can describe the general' },
      finish_reason: 'content_filter',
    });
    expect(response).toMatchObject({ id: 'safety-Qm41bw', model: 'gemini-2.5-flash' });
  });

  it('answers thought parts as reasoning_content, several tool calls with ids, and thinking usage', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'thinking-tool-call.json' });
    const { response } = await adapter.complete(simple, context());
    const message = response.choices[0]!.message;
    expect(message.content).toBeNull();
    expect(message.reasoning_content).toContain('call the tool twice');
    expect(
      message.tool_calls!.map((call) => [call.function.name, JSON.parse(call.function.arguments)]),
    ).toEqual([
      ['get_weather', { city: 'Lyon' }],
      ['get_weather', { city: 'Nice', unit: 'celsius' }],
    ]);
    expect(new Set(message.tool_calls!.map((call) => call.id)).size).toBe(2);
    expect(response.choices[0]!.finish_reason).toBe('tool_calls');
    expect(response.usage).toEqual({
      prompt_tokens: 120,
      completion_tokens: 75,
      total_tokens: 195,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 45 },
    });
  });

  it('sends the thought signature of a tool call back on its functionCall part', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'thinking-tool-call.json' });
    const first = (await adapter.complete(simple, context())).response.choices[0]!.message;
    await adapter.complete(
      {
        ...simple,
        messages: [
          ...simple.messages,
          { role: 'assistant', content: null, tool_calls: first.tool_calls },
          { role: 'tool', tool_call_id: first.tool_calls![0]!.id, content: 'sunny' },
          { role: 'tool', tool_call_id: first.tool_calls![1]!.id, content: '{"temp":19}' },
        ],
      },
      context(),
    );
    const contents = upstream.requests[1]!.body.contents;
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { name: 'get_weather', args: { city: 'Lyon' } },
          thoughtSignature: 'c2lnbmF0dXJlLW9uZQ==',
        },
        { functionCall: { name: 'get_weather', args: { city: 'Nice', unit: 'celsius' } } },
      ],
    });
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
        { functionResponse: { name: 'get_weather', response: { content: { temp: 19 } } } },
      ],
    });
  });

  it('streams thinking as reasoning_content deltas and usage with reasoning tokens', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'thinking-text.chunks.txt' });
    const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
    const deltas = chunks.map(
      (chunk) => chunk.chunk.choices[0]?.delta as Record<string, unknown> | undefined,
    );
    expect(deltas[0]).toMatchObject({ role: 'assistant', reasoning_content: 'Counting the letters first.' });
    expect(deltas.map((delta) => delta?.content ?? '').join('')).toBe('There are three letters r.');
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 18,
      total_tokens: 26,
      completion_tokens_details: { reasoning_tokens: 12 },
    });
    expect(chunks[0]!.chunk).toMatchObject({ id: 'think-Rw0x', model: 'gemini-2.5-flash' });
  });

  it('fails a stream that ends without a finish reason as a retryable protocol error', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'no-finish.chunks.txt' });
    const received: StreamChunk[] = [];
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context()), received));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
    expect(received.length).toBe(2);
  });

  it('turns an error event in the stream into a retryable protocol error with its status', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'error-event.chunks.txt' });
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true, providerCode: 'UNAVAILABLE' });
  });

  it("reads a 429's RetryInfo delay among other details, keeps RESOURCE_EXHAUSTED and drops the body", async () => {
    upstream.enqueue({ kind: 'fixture', file: 'error-429-quota.json', status: 429 });
    const error = await failure(adapter.complete(simple, context()));
    expect(error).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 1_500,
      providerCode: 'RESOURCE_EXHAUSTED',
    });
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('sk-quota-leak');
  });

  it('prefers a Retry-After header over the RetryInfo delay', async () => {
    upstream.enqueue({
      kind: 'raw',
      status: 429,
      contentType: 'application/json',
      pieces: [
        '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}',
      ],
    });
    const error = await failure(adapter.complete(simple, context()));
    expect(error.retryAfterMs).toBe(30_000);
  });

  it('fails an endless SSE line at the parser bound, as a protocol error, without buffering it all', async () => {
    const megabyte = Buffer.alloc(1024 * 1024, 'x');
    upstream.enqueue({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      pieces: [
        Buffer.from('data: {"candidates":[{"content":{"parts":[{"text":"'),
        ...Array(10).fill(megabyte),
      ],
    });
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('fails an event that is not JSON as a protocol error', async () => {
    upstream.enqueue({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      pieces: ['data: {"candidates": [\r\n\r\n'],
    });
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
    expect(error).toMatchObject({
      kind: 'protocol',
      message: 'the upstream sent malformed JSON in the stream',
    });
  });

  it('fails a 200 answer without candidates or block reason as a retryable protocol error', async () => {
    upstream.enqueue({
      kind: 'raw',
      status: 200,
      contentType: 'application/json',
      pieces: ['{"usageMetadata":{}}'],
    });
    expect(await failure(adapter.complete(simple, context()))).toMatchObject({
      kind: 'protocol',
      retryable: true,
    });
  });

  it('sends deployment defaults only where the caller set nothing', async () => {
    await adapter.complete({ ...simple, temperature: 0.1 }, context());
    expect(upstream.requests[0]!.body.generationConfig).toEqual({ temperature: 0.1, topK: 20 });
  });

  it('refuses n > 1 and an image URL without a known type before calling the upstream', async () => {
    expect(await failure(adapter.complete({ ...simple, n: 2 }, context()))).toMatchObject({
      status: 400,
      retryable: false,
      providerCode: 'unsupported_n',
    });
    const image: ChatRequest = {
      ...simple,
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/photo' } }] },
      ],
    };
    expect((await failure(adapter.complete(image, context()))).providerCode).toBe('unsupported_image_url');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('gemini in a LiteLLM-format config', () => {
  const yaml = `
model_list:
  - model_name: flash
    litellm_params:
      model: gemini/gemini-2.5-flash
      api_key: os.environ/GEMINI_API_KEY
      temperature: 0.2
`;

  it('loads gemini/<model> with its key from the environment and builds a registry', () => {
    const providers = builtinProviders();
    const config = parseConfig(yaml, {
      checkDeployment: (deploymentParams, index) => deploymentProblems(deploymentParams, index, providers),
      path: undefined,
      env: { GEMINI_API_KEY: 'AIza-test-key' },
      dataDir: '/tmp/switchboard-gemini',
      source: 'gemini.yaml',
    });
    expect(config.model_list[0]!.params).toMatchObject({
      provider: 'gemini',
      model: 'gemini-2.5-flash',
      api_key: 'AIza-test-key',
    });
    const warnings: string[] = [];
    const registry = buildModelRegistry(config, providers, Date.now(), warnings);
    expect(warnings).toEqual([]);
    expect(registry).toBeDefined();
  });

  it('refuses a gemini deployment without a key', () => {
    const providers = builtinProviders();
    const load = () =>
      parseConfig(
        'model_list:\n  - model_name: flash\n    litellm_params: { model: gemini/gemini-2.5-flash }\n',
        {
          checkDeployment: (deploymentParams, index) =>
            deploymentProblems(deploymentParams, index, providers),
          path: undefined,
          env: {},
          dataDir: '/tmp/switchboard-gemini',
          source: 'gemini-no-key.yaml',
        },
      );
    expect(load).toThrow(ConfigError);
  });
});
