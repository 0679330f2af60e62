/**
 * The `anthropic` adapter against a fake Messages upstream: the shared translating-adapter suite, then
 * what is Anthropic's own (recorded stream shapes, in-stream errors, hostile streams, the native
 * pass-through methods and a LiteLLM-format configuration).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import type { AnthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.ts';
import { anthropicProvider } from '../../src/providers/anthropic/index.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import type { DeploymentSettings } from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { FakeAnthropicServer } from '../fakes/anthropic/fake-anthropic-server.ts';
import { settingsFor } from '../support/provider-adapter-suite.ts';
import {
  type NativePart,
  type NativeRequestView,
  type RecordedNativeRequest,
  runTranslatingAdapterSuite,
} from '../support/translating-adapter-suite.ts';

const params = (origin: string) => ({ model: 'upstream-model', api_key: 'sk-ant-test', api_base: origin });

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    : '';
}

function view(seen: RecordedNativeRequest): NativeRequestView {
  const body = seen.body;
  const parts: NativePart[] = [];
  for (const message of body.messages) {
    const blocks =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const block of blocks) {
      if (block.type === 'text') parts.push({ role: message.role, text: block.text });
      else if (block.type === 'tool_use')
        parts.push({
          role: message.role,
          toolCall: { id: block.id, name: block.name, arguments: block.input },
        });
      else if (block.type === 'tool_result')
        parts.push({
          role: message.role,
          toolResult: { id: block.tool_use_id, content: blockText(block.content) },
        });
      else parts.push({ role: message.role });
    }
  }
  const tools: Array<{ name: string; input_schema: unknown }> = body.tools ?? [];
  return {
    system: body.system === undefined ? undefined : blockText(body.system),
    parts,
    tools: tools.map((tool) => tool.name),
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    stop: body.stop_sequences,
    jsonSchema: tools.find((tool) => tool.name === body.tool_choice?.name)?.input_schema,
  };
}

runTranslatingAdapterSuite({
  name: 'anthropic',
  factory: anthropicProvider,
  startUpstream: () => FakeAnthropicServer.start(),
  params,
  expectEndpoint(seen, streaming) {
    expect(seen).toMatchObject({ method: 'POST', path: '/v1/messages' });
    expect(seen.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    });
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.body.stream).toBe(streaming ? true : undefined);
    expect(seen.body.model).toBe('upstream-model');
  },
  view,
  expectedUsage: {
    prompt_tokens: 14,
    completion_tokens: 7,
    total_tokens: 21,
    prompt_tokens_details: { cached_tokens: 3 },
  },
  keepsToolCallIds: true,
  sendsRetryAfter: true,
});

const simple: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hello there' }] };
const context = () => ({ signal: new AbortController().signal, requestId: 'req-anthropic' });

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** The chunks received before the stream failed, and the failure. */
async function failingStream(stream: AsyncIterable<StreamChunk>): Promise<[StreamChunk[], UpstreamError]> {
  const received: StreamChunk[] = [];
  try {
    for await (const chunk of stream) received.push(chunk);
  } catch (error) {
    if (error instanceof UpstreamError) return [received, error];
    throw error;
  }
  throw new Error('expected the stream to fail');
}

describe('anthropic adapter: Anthropic specifics', () => {
  let upstream: FakeAnthropicServer;
  let adapter: AnthropicAdapter;
  const make = (
    extra: Record<string, unknown> = {},
    timeouts: Partial<DeploymentSettings['timeouts']> = {},
  ) =>
    anthropicProvider.create(
      settingsFor({ ...params(upstream.origin), ...extra }, timeouts),
    ) as AnthropicAdapter;

  beforeAll(async () => {
    upstream = await FakeAnthropicServer.start();
    adapter = make();
  });
  afterAll(async () => {
    await adapter?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('sends max_tokens 4096 when neither caller nor deployment sets it, and the caller value over the default', async () => {
    await adapter.complete(simple, context());
    expect(upstream.requests[0]!.body.max_tokens).toBe(4096);
    const defaulted = make({ max_tokens: 300, temperature: 0.9, top_k: 5, anthropic_version: '2099-01-01' });
    await defaulted.complete({ ...simple, max_completion_tokens: 50, temperature: 0.1 }, context());
    await defaulted.complete(simple, context());
    await defaulted.close();
    expect(upstream.requests[1]!.body).toMatchObject({ max_tokens: 50, temperature: 0.1, top_k: 5 });
    expect(upstream.requests[2]!.body).toMatchObject({ max_tokens: 300, temperature: 0.9 });
    expect(upstream.requests[2]!.headers['anthropic-version']).toBe('2099-01-01');
  });

  it('posts to <api_base>/v1/messages when api_base already ends in /v1', async () => {
    const withV1 = make({ api_base: `${upstream.origin}/v1/` });
    await withV1.complete(simple, context());
    await withV1.close();
    expect(upstream.requests[0]!.path).toBe('/v1/messages');
  });

  it('streams a recorded thinking answer as reasoning_content, then text, with cache writes in the usage', async () => {
    upstream.enqueue({ kind: 'replay', fixture: 'thinking-then-text' });
    const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
    expect(chunks[0]!.chunk.choices[0]!.delta.role).toBe('assistant');
    const deltas = chunks.map(
      (chunk) => (chunk.chunk.choices[0]?.delta ?? {}) as { content?: string; reasoning_content?: string },
    );
    expect(deltas.map((delta) => delta.reasoning_content ?? '').join('')).toBe(
      'The user greets me. A short reply will do.',
    );
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe('Hi — nice to meet you.');
    expect(chunks.at(-2)!.chunk.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 125,
      completion_tokens: 42,
      total_tokens: 167,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 100 },
    });
    expect(new Set(chunks.map((chunk) => chunk.chunk.id))).toEqual(new Set(['msg_01ThinkingReplay']));
  });

  it('numbers streamed tool_use blocks as tool calls 0 and 1, keeping ids, after the text', async () => {
    upstream.enqueue({ kind: 'replay', fixture: 'text-and-two-tools' });
    const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
    const calls = chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? []);
    const assembled = [0, 1].map((index) =>
      calls
        .filter((call) => call.index === index)
        .map((call) => call.function?.arguments ?? '')
        .join(''),
    );
    expect(assembled.map((text) => JSON.parse(text))).toEqual([{ city: 'Paris' }, { city: 'Oslo' }]);
    expect(calls.filter((call) => call.id).map((call) => [call.index, call.id, call.type])).toEqual([
      [0, 'toolu_01ParisLookup', 'function'],
      [1, 'toolu_01OsloLookup', 'function'],
    ]);
    expect(chunks.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('')).toBe(
      'Checking both cities.',
    );
    expect(chunks.at(-2)!.chunk.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('streams json_schema output as content with finish_reason stop', async () => {
    upstream.enqueue({ kind: 'json', value: { city: 'Oslo', temp: 4 } });
    const request = {
      ...simple,
      stream: true,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } },
    };
    const chunks = await collect(adapter.stream(request, context()));
    const text = chunks.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('');
    expect(JSON.parse(text)).toEqual({ city: 'Oslo', temp: 4 });
    expect(chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? [])).toEqual([]);
    expect(chunks.at(-2)!.chunk.choices[0]!.finish_reason).toBe('stop');
  });

  it('fails on an error event mid-stream as a retryable protocol error naming its type', async () => {
    upstream.enqueue({ kind: 'replay', fixture: 'overloaded-mid-stream' });
    const [received, error] = await failingStream(adapter.stream({ ...simple, stream: true }, context()));
    expect(received.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('')).toBe(
      'Partial answ',
    );
    expect(error).toMatchObject({ kind: 'protocol', retryable: true, providerCode: 'overloaded_error' });
  });

  it('fails a stream that ends before message_stop', async () => {
    upstream.enqueue({
      kind: 'raw',
      contentType: 'text/event-stream',
      pieces: ['event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'],
    });
    const [received, error] = await failingStream(adapter.stream({ ...simple, stream: true }, context()));
    expect(received).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it.each([
    ['an endless line', ['data: ', ...Array.from({ length: 9 }, () => 'x'.repeat(1024 * 1024))], false],
    ['an event with invalid JSON', ['event: message_start\ndata: {"type":\n\n'], true],
    ['an event whose JSON is not an object', ['event: message_start\ndata: [1,2,3]\n\n'], true],
    ['an event without a type', ['data: {"message":{}}\n\n'], true],
  ] as const)('fails a hostile stream with %s as a protocol error', async (_name, pieces, end) => {
    upstream.enqueue({ kind: 'raw', contentType: 'text/event-stream', pieces: [...pieces], end });
    const [, error] = await failingStream(adapter.stream({ ...simple, stream: true }, context()));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('refuses a stream answered as JSON', async () => {
    upstream.enqueue({ kind: 'raw', contentType: 'application/json', pieces: ['{"type":"message"}'] });
    const [, error] = await failingStream(adapter.stream({ ...simple, stream: true }, context()));
    expect(error.kind).toBe('protocol');
  });

  it('times out a stream that sends only pings before the first event', async () => {
    const impatient = make({}, { totalMs: 300, streamIdleMs: 2_000 });
    upstream.enqueue({ kind: 'pings-only', intervalMs: 50 });
    const [, error] = await failingStream(impatient.stream({ ...simple, stream: true }, context()));
    await impatient.close();
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('classifies 529 overloaded as retryable and keeps the error type as provider code', async () => {
    upstream.enqueue({ kind: 'error', status: 529 }, { kind: 'error', status: 400 });
    await expect(adapter.complete(simple, context())).rejects.toMatchObject({
      kind: 'status',
      status: 529,
      retryable: true,
      providerCode: 'overloaded_error',
    });
    await expect(adapter.complete(simple, context())).rejects.toMatchObject({
      status: 400,
      retryable: false,
      providerCode: 'invalid_request_error',
    });
  });

  it('completeNative sends the body as given and returns the Message, its JSON and usage', async () => {
    const body = { model: 'claude-native', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] };
    const result = await adapter.completeNative(body, context());
    expect(upstream.requests[0]!.body).toEqual(body);
    expect(JSON.parse(result.json)).toEqual(result.message);
    expect(result.message).toMatchObject({
      type: 'message',
      model: 'claude-native',
      content: [{ text: 'echo: hi' }],
    });
    expect(result.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 7, total_tokens: 21 });
  });

  it('streamNative yields the events as received, with usage on message_delta', async () => {
    const body = { model: 'claude-native', max_tokens: 20, messages: [{ role: 'user', content: 'a b' }] };
    const events = await collect(adapter.streamNative(body, context()));
    expect(upstream.requests[0]!.body).toEqual({ ...body, stream: true });
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(JSON.parse(events[3]!.data)).toMatchObject({ delta: { type: 'text_delta', text: 'echo: ' } });
    expect(events.filter((event) => event.usage).map((event) => [event.event, event.usage])).toEqual([
      [
        'message_delta',
        {
          prompt_tokens: 14,
          completion_tokens: 7,
          total_tokens: 21,
          prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 0 },
        },
      ],
    ]);
  });

  it('native calls classify errors and in-stream errors like translated ones', async () => {
    upstream.enqueue(
      { kind: 'error', status: 429, retryAfterSeconds: 3 },
      { kind: 'replay', fixture: 'overloaded-mid-stream' },
    );
    const body = { model: 'claude-native', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] };
    await expect(adapter.completeNative(body, context())).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 3_000,
      providerCode: 'rate_limit_error',
    });
    await expect(collect(adapter.streamNative(body, context()))).rejects.toMatchObject({
      kind: 'protocol',
      providerCode: 'overloaded_error',
    });
  });
});

describe('anthropic in a LiteLLM-format configuration', () => {
  it('loads anthropic/<model> with an os.environ/ key and builds a registry', async () => {
    const yaml = `
model_list:
  - model_name: claude
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_key: os.environ/ANTHROPIC_API_KEY
      max_tokens: 2048
`;
    const providers = builtinProviders();
    const config = parseConfig(yaml, {
      checkDeployment: (deployment, index) => deploymentProblems(deployment, index, providers),
      path: undefined,
      env: { ANTHROPIC_API_KEY: 'sk-ant-from-env' },
      dataDir: '/tmp/switchboard-anthropic',
      source: 'anthropic.yaml',
    });
    expect(config.model_list[0]!.params).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      api_key: 'sk-ant-from-env',
    });
    const warnings = [...config.warnings];
    const registry = buildModelRegistry(config, providers, Date.now(), warnings);
    expect(warnings).toEqual([]);
    expect(registry.group('claude')!.deployments).toHaveLength(1);
    await registry.close();
  });
});
