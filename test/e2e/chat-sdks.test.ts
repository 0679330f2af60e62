/**
 * The chat proxy driven by real clients (issue 3): the official openai SDK and the Vercel AI SDK work
 * unchanged against Switchboard, on the embedded default and on PostgreSQL + Redis. The fake upstream
 * records what it received, so the tests check both sides.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('chat through the SDKs on %s', (_name, makeBackend) => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = makeBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: gpt-test
    params: { provider: openai, model: upstream-gpt, api_base: "${upstream.baseUrl}", api_key: sk-upstream-secret }
    model_info: { id: gpt-test-primary }
  - model_name: azure-test
    params: { provider: azure, model: my-deployment, api_base: "${upstream.origin}", api_key: azure-secret, api_version: "2024-10-21" }
    model_info: { id: azure-test-primary }
  - model_name: limited
    params: { provider: openai, model: upstream-limited, api_base: "${upstream.baseUrl}" }
router_settings:
  num_retries: 1
`,
    });
    key = await gateway.createKey({ models: ['gpt-test', 'azure-test', 'limited'] });
    client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  it('answers a chat completion and maps the model name, credentials and extra fields upstream', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'ping' }],
        temperature: 0.1,
        seed: 3,
        ...({ vendor_extension: { x: 1 } } as object),
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('echo: ping');
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-switchboard-deployment')).toBe('gpt-test-primary');
    expect(response.headers.get('x-switchboard-attempts')).toBe('1');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const seen = upstream.requests[0]!;
    expect(seen.body).toMatchObject({
      model: 'upstream-gpt',
      temperature: 0.1,
      seed: 3,
      vendor_extension: { x: 1 },
    });
    expect(seen.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(JSON.stringify(seen.headers)).not.toContain(key);
  });

  it('streams content chunk by chunk and ends with [DONE]', async () => {
    upstream.defaultScenario = { kind: 'answer', text: 'one two three four' };
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    const deltas: string[] = [];
    for await (const chunk of stream) deltas.push(chunk.choices[0]?.delta.content ?? '');
    expect(deltas.join('')).toBe('one two three four');
    expect(deltas.filter(Boolean).length).toBeGreaterThanOrEqual(4);
  });

  it('always asks the upstream for usage but forwards the usage chunk only when the caller asked', async () => {
    const raw = async (body: object) => {
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-test',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
          ...body,
        }),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      return (await response.text()).split('\n\n').filter(Boolean);
    };
    const without = await raw({});
    expect(upstream.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(without.at(-1)).toBe('data: [DONE]');
    expect(without.some((event) => event.includes('"choices":[]'))).toBe(false);
    const withUsage = await raw({ stream_options: { include_usage: true } });
    expect(withUsage.at(-2)).toContain('"usage":{');
    expect(withUsage.at(-1)).toBe('data: [DONE]');
  });

  it('reports usage at the end of a stream with include_usage through the SDK', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'x' }],
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('round-trips tool calls: the model calls a tool, the tool result goes back upstream', async () => {
    upstream.enqueue({ kind: 'answer', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const first = await client.chat.completions.create({
      model: 'gpt-test',
      tools,
      tool_choice: 'auto',
      messages: [{ role: 'user', content: 'weather?' }],
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(upstream.requests[0]!.body).toMatchObject({ tools, tool_choice: 'auto' });
    await client.chat.completions.create({
      model: 'gpt-test',
      tools,
      messages: [
        { role: 'user', content: 'weather?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: '{"temp": 21}' },
      ],
    });
    expect(upstream.requests[1]!.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: call.id,
      content: '{"temp": 21}',
    });
  });

  it('passes response_format with a JSON schema through and returns the JSON answer', async () => {
    upstream.enqueue({ kind: 'answer', text: '{"answer":42}' });
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'result',
        strict: true,
        schema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
      },
    };
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      response_format: responseFormat,
      messages: [{ role: 'user', content: 'q' }],
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ answer: 42 });
    expect(upstream.requests[0]!.body.response_format).toEqual(responseFormat);
  });

  it('serves an Azure deployment through its deployment path and api-key', async () => {
    const completion = await client.chat.completions.create({
      model: 'azure-test',
      messages: [{ role: 'user', content: 'az' }],
    });
    expect(completion.choices[0]?.message.content).toBe('echo: az');
    expect(upstream.requests[0]!.path).toBe(
      '/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21',
    );
    expect(upstream.requests[0]!.headers['api-key']).toBe('azure-secret');
  });

  it('lists and retrieves models', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id).sort()).toEqual(['azure-test', 'gpt-test', 'limited']);
    const model = await client.models.retrieve('gpt-test');
    expect(model).toMatchObject({ id: 'gpt-test', object: 'model', owned_by: 'openai' });
  });

  it('surfaces errors as the SDK’s error classes with the right status', async () => {
    const ask = (model: string, options: object = {}) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], ...options });
    await expect(ask('no-such-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(ask('demo')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(ask('gpt-test', { max_tokens: 1, max_completion_tokens: 1 })).rejects.toBeInstanceOf(
      OpenAI.BadRequestError,
    );
    const badKey = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    await expect(
      badKey.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const narrowKey = await gateway.createKey({ models: ['limited'] });
    const narrow = new OpenAI({ apiKey: narrowKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    await expect(
      narrow.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);

    upstream.enqueue({ kind: 'error', status: 400, code: 'invalid_value' });
    const badRequest = await ask('gpt-test').catch((error: unknown) => error);
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRequest as InstanceType<typeof OpenAI.BadRequestError>).message).not.toContain(
      'sk-upstream-leak',
    );

    upstream.defaultScenario = { kind: 'error', status: 429, headers: { 'retry-after': '9' } };
    const limited = await ask('limited').catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('9');
  });

  it('works with the Vercel AI SDK (generateText and streamText)', async () => {
    const provider = createOpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1` });
    const generated = await generateText({
      model: provider.chat('gpt-test'),
      prompt: 'vercel',
      maxRetries: 0,
    });
    expect(generated.text).toBe('echo: vercel');
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
    upstream.defaultScenario = { kind: 'answer', text: 'streamed by vercel' };
    const streamed = streamText({ model: provider.chat('gpt-test'), prompt: 'stream', maxRetries: 0 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe('streamed by vercel');
  });
});
