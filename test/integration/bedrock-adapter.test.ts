/**
 * The bedrock adapter against a fake Bedrock runtime that verifies SigV4: the translating-adapter
 * conformance suite, then what only Bedrock has (signing, stream exceptions and frame bounds, cache
 * usage, credentials, LiteLLM configuration files).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { BedrockAdapter } from '../../src/providers/bedrock/bedrock-adapter.ts';
import { bedrockProvider } from '../../src/providers/bedrock/index.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { bedrockRequestView } from '../fakes/bedrock/bedrock-request-view.ts';
import { encodeEvent, FAKE_REQUEST_ID } from '../fakes/bedrock/fake-bedrock-answers.ts';
import { FAKE_ACCOUNT, FakeBedrockServer } from '../fakes/bedrock/fake-bedrock-server.ts';
import { settingsFor } from '../support/provider-adapter-suite.ts';
import { runTranslatingAdapterSuite } from '../support/translating-adapter-suite.ts';

/** A fixture of test/fakes/bedrock/fixtures/ (written for these tests, in Bedrock's wire shapes). */
function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fakes/bedrock/fixtures/${name}`, import.meta.url), 'utf8'));
}

const params = (origin: string, overrides: Record<string, unknown> = {}) => ({
  model: 'upstream-model',
  aws_region_name: FAKE_ACCOUNT.region,
  aws_access_key_id: FAKE_ACCOUNT.accessKeyId,
  aws_secret_access_key: FAKE_ACCOUNT.secretAccessKey,
  api_base: origin,
  ...overrides,
});

runTranslatingAdapterSuite({
  name: 'bedrock',
  factory: bedrockProvider,
  startUpstream: () => FakeBedrockServer.start(),
  params: (origin) => params(origin),
  expectEndpoint(seen, streaming) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe(`/model/upstream-model/${streaming ? 'converse-stream' : 'converse'}`);
    expect(seen.headers.authorization).toMatch(
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${FAKE_ACCOUNT.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, `,
      ),
    );
    expect(seen.headers.accept).toBe(streaming ? 'application/vnd.amazon.eventstream' : 'application/json');
  },
  view: bedrockRequestView,
  expectedUsage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  keepsToolCallIds: true,
  sendsRetryAfter: false,
});

const simple: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const context = () => ({ signal: new AbortController().signal, requestId: 'req-7' });

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
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

describe('bedrock adapter: what only Bedrock has', () => {
  let upstream: FakeBedrockServer;
  let adapter: BedrockAdapter;
  beforeAll(async () => {
    upstream = await FakeBedrockServer.start();
    adapter = new BedrockAdapter(settingsFor(params(upstream.origin)));
  });
  afterAll(async () => {
    await adapter.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('signs an inference-profile ARN path the way AWS escapes it, with a session token', async () => {
    const arn =
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';
    const signed = new BedrockAdapter(
      settingsFor(
        params(upstream.origin, { model: `converse/${arn}`, aws_session_token: 'session-token-1' }),
      ),
    );
    // The router sends each deployment its own model name (params.model).
    const { response } = await signed.complete({ ...simple, model: `converse/${arn}` }, context());
    await signed.close();
    expect(upstream.refused).toEqual([]);
    const seen = upstream.requests[0]!;
    expect(seen.path).toBe(`/model/${encodeURIComponent(arn)}/converse`);
    expect(seen.headers['x-amz-security-token']).toBe('session-token-1');
    expect(seen.headers.authorization).toContain('x-amz-security-token');
    expect(response).toMatchObject({ id: `chatcmpl-${FAKE_REQUEST_ID}`, model: arn });
  });

  it('refuses a wrong secret at the fake (403) and classifies it as not retryable', async () => {
    const wrong = new BedrockAdapter(
      settingsFor(params(upstream.origin, { aws_secret_access_key: 'not-the-secret' })),
    );
    const error = await failure(wrong.complete(simple, context()));
    await wrong.close();
    expect(error).toMatchObject({
      kind: 'status',
      status: 403,
      retryable: false,
      providerCode: 'InvalidSignatureException',
    });
    expect(upstream.refused).toEqual(['signature mismatch']);
  });

  it('answers an unknown access key with UnrecognizedClientException', async () => {
    const unknown = new BedrockAdapter(
      settingsFor(params(upstream.origin, { aws_access_key_id: 'AKIAUNKNOWN' })),
    );
    const error = await failure(unknown.complete(simple, context()));
    await unknown.close();
    expect(error).toMatchObject({
      status: 403,
      retryable: false,
      providerCode: 'UnrecognizedClientException',
    });
  });

  it('signs the extra headers it sends', async () => {
    const withHeaders = new BedrockAdapter(
      settingsFor(params(upstream.origin, { extra_headers: { 'X-Trace-Tag': 'abc' } })),
    );
    await withHeaders.complete(simple, context());
    await withHeaders.close();
    expect(upstream.requests[0]!.headers['x-trace-tag']).toBe('abc');
    expect(upstream.requests[0]!.headers.authorization).toContain('x-trace-tag');
  });

  it('reads reasoning and prompt-cache counts from a Converse answer', async () => {
    upstream.enqueue({ kind: 'raw-json', body: fixture('converse-reasoning-cache.json') });
    const { response } = await adapter.complete(simple, context());
    expect(response.choices[0]!.message).toMatchObject({
      content: 'Hello, Ada.',
      reasoning_content: 'The user wants a greeting.',
    });
    expect(response.usage).toEqual({
      prompt_tokens: 15,
      completion_tokens: 3,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 6, cache_creation_tokens: 4 },
    });
  });

  it('streams text, then two tool calls numbered 0 and 1, then the usage of the metadata event', async () => {
    upstream.enqueue({ kind: 'events', events: fixture('text-then-two-tools.events.json') });
    const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
    expect(chunks.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('')).toBe(
      'Checking both cities.',
    );
    const calls = new Map<number, { id?: string; arguments: string }>();
    for (const delta of chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? [])) {
      const call = calls.get(delta.index) ?? { arguments: '' };
      if (delta.id) call.id = delta.id;
      call.arguments += delta.function?.arguments ?? '';
      calls.set(delta.index, call);
    }
    expect([...calls]).toEqual([
      [0, { id: 'tooluse_paris01', arguments: '{"city":"Paris"}' }],
      [1, { id: 'tooluse_oslo02', arguments: '{"city":"Oslo"}' }],
    ]);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 });
    expect(chunks.at(-2)!.chunk.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('reads a finished stream to its end, so the next call reuses the connection', async () => {
    const single = new BedrockAdapter(settingsFor(params(upstream.origin), {}, 1));
    await collect(single.stream({ ...simple, stream: true }, context()));
    await collect(single.stream({ ...simple, stream: true }, context()));
    await single.close();
    expect(upstream.clientPorts).toHaveLength(2);
    expect(upstream.clientPorts[1]).toBe(upstream.clientPorts[0]);
  });

  it('fails a stream on an exception frame, retryable for throttling and not for validation', async () => {
    for (const [exception, retryable] of [
      ['throttlingException', true],
      ['modelStreamErrorException', true],
      ['validationException', false],
    ] as const) {
      upstream.enqueue({
        kind: 'events',
        events: [
          { type: 'messageStart', payload: { role: 'assistant' } },
          { exception, message: 'echo of the prompt: sk-secret' },
        ],
      });
      const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
      expect(error, exception).toMatchObject({ kind: 'protocol', retryable, providerCode: exception });
      expect(error.message).not.toContain('sk-secret');
    }
  });

  it('refuses an oversize frame length and a corrupted frame as retryable protocol errors', async () => {
    const oversize = new Uint8Array(16);
    new DataView(oversize.buffer).setUint32(0, 17 * 1024 * 1024);
    const corrupt = encodeEvent({ type: 'messageStart', payload: { role: 'assistant' } });
    corrupt[corrupt.length - 6]! ^= 0xff;
    for (const bytes of [oversize, corrupt]) {
      upstream.enqueue({ kind: 'raw-stream', bytes });
      const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
      expect(error).toMatchObject({ kind: 'protocol', retryable: true });
    }
  });

  it('fails a stream that ends before messageStop, and ends without usage when metadata is missing', async () => {
    const start = { type: 'messageStart', payload: { role: 'assistant' } };
    const text = { type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'hi' } } };
    upstream.enqueue({ kind: 'events', events: [start, text] });
    const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
    upstream.enqueue({
      kind: 'events',
      events: [start, text, { type: 'messageStop', payload: { stopReason: 'end_turn' } }],
    });
    const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
    expect(chunks.at(-1)!.chunk.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true);
  });

  it('streams reasoning as reasoning_content and structured output as text with finish_reason stop', async () => {
    upstream.enqueue({
      kind: 'events',
      events: [
        { type: 'messageStart', payload: { role: 'assistant' } },
        {
          type: 'contentBlockDelta',
          payload: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } },
        },
        { type: 'messageStop', payload: { stopReason: 'end_turn' } },
      ],
    });
    const reasoning = await collect(adapter.stream({ ...simple, stream: true }, context()));
    expect(reasoning.map((chunk) => chunk.chunk.choices[0]?.delta).filter(Boolean)).toContainEqual({
      reasoning_content: 'hmm',
    });
    upstream.enqueue({ kind: 'json', value: { ok: true } });
    const json = await collect(
      adapter.stream({ ...simple, stream: true, response_format: { type: 'json_object' } }, context()),
    );
    expect(json.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('')).toBe('{"ok":true}');
    expect(json.map((chunk) => chunk.chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
  });

  it('reports a failing default credential chain as a non-retryable connect error', async () => {
    const {
      aws_access_key_id: _id,
      aws_secret_access_key: _secret,
      ...withoutKeys
    } = params(upstream.origin);
    const chainless = new BedrockAdapter(settingsFor(withoutKeys), async () => {
      throw new Error('Could not load credentials from any providers');
    });
    const error = await failure(chainless.complete(simple, context()));
    await chainless.close();
    expect(error).toMatchObject({ kind: 'connect', retryable: false });
    expect(error.message).toContain('credentials were not found');
    expect(upstream.requests).toEqual([]);
  });
});

describe('bedrock params', () => {
  it('names the missing region and refuses half a key pair', () => {
    expect(bedrockProvider.validate({ model: 'm', aws_access_key_id: 'AKIA' })).toEqual([
      'aws_region_name: is required for bedrock (the AWS region, e.g. us-east-1)',
      'aws_access_key_id: aws_access_key_id and aws_secret_access_key are given together or not at all',
    ]);
  });
});

describe('LiteLLM configuration with bedrock deployments', () => {
  const yaml = `
model_list:
  - model_name: claude
    litellm_params:
      model: bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0
      aws_region_name: us-east-1
      aws_access_key_id: os.environ/AWS_ACCESS_KEY_ID
      aws_secret_access_key: os.environ/AWS_SECRET_ACCESS_KEY
  - model_name: claude-plain
    litellm_params:
      model: bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0
      aws_region_name: eu-west-1
      aws_access_key_id: os.environ/AWS_ACCESS_KEY_ID
      aws_secret_access_key: os.environ/AWS_SECRET_ACCESS_KEY
`;

  it('loads and builds a registry with both deployments', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'example-secret' };
    const providers = builtinProviders();
    let config: ReturnType<typeof parseConfig>;
    try {
      config = parseConfig(yaml, {
        checkDeployment: (deployment, index) => deploymentProblems(deployment, index, providers),
        path: undefined,
        env,
        dataDir: '/tmp/switchboard-bedrock',
        source: 'bedrock.yaml',
      });
    } catch (error) {
      throw error instanceof ConfigError ? new Error(error.issues.join('\n')) : error;
    }
    const warnings: string[] = [];
    const registry = buildModelRegistry(config, providers, Date.now(), warnings);
    expect(warnings).toEqual([]);
    expect(config.model_list.map((entry) => [entry.params.provider, entry.params.model])).toEqual([
      ['bedrock', 'converse/anthropic.claude-3-5-sonnet-20240620-v1:0'],
      ['bedrock', 'anthropic.claude-3-5-sonnet-20240620-v1:0'],
    ]);
    expect(config.model_list[0]!.params.aws_access_key_id).toBe('AKIAEXAMPLE');
    for (const name of ['claude', 'claude-plain']) {
      const group = registry.group(name)!;
      expect(group.deployments).toHaveLength(1);
      await group.deployments[0]!.adapter.close();
    }
  });
});
