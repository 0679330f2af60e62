/**
 * Every inbound text format × every provider kind (issue 11): chat, completions, responses and messages
 * callers, each through its official SDK, against OpenAI-compatible, Anthropic, Gemini and Bedrock
 * deployments (fake upstreams speaking their native formats). Text, tool calls, JSON output and streams
 * must keep their content, tool arguments, stop reasons and usage across the translation; a group
 * mixing provider kinds fails over from one to another; and a Messages caller of an Anthropic
 * deployment is passed through natively.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeAnthropicServer } from '../fakes/anthropic/fake-anthropic-server.ts';
import { FAKE_ACCOUNT, FakeBedrockServer } from '../fakes/bedrock/fake-bedrock-server.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { FakeGeminiServer } from '../fakes/gemini/fake-gemini-server.ts';
import { backendFactories } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

type Provider = 'openai' | 'anthropic' | 'gemini' | 'bedrock';
type Answer =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; name: string; args: object }
  | { kind: 'json'; value: object };

interface Upstreams {
  openai: FakeOpenAiServer;
  anthropic: FakeAnthropicServer;
  gemini: FakeGeminiServer;
  bedrock: FakeBedrockServer;
}

/** Queues one answer on a provider's fake, in that fake's own scenario language. */
function enqueue(upstreams: Upstreams, provider: Provider, answer: Answer): void {
  if (provider === 'openai') {
    const fake = upstreams.openai;
    if (answer.kind === 'tool')
      fake.enqueue({
        kind: 'answer',
        toolCalls: [{ name: answer.name, arguments: JSON.stringify(answer.args) }],
      });
    else
      fake.enqueue({
        kind: 'answer',
        text: answer.kind === 'text' ? answer.text : JSON.stringify(answer.value),
      });
    return;
  }
  const fake = upstreams[provider];
  if (answer.kind === 'tool')
    fake.enqueue({ kind: 'tool-call', name: answer.name, arguments: answer.args as Record<string, unknown> });
  else if (answer.kind === 'json')
    fake.enqueue({ kind: 'json', value: answer.value as Record<string, unknown> });
  else fake.enqueue({ kind: 'text', text: answer.text });
}

/** The output tokens each fake reports for `text` (the OpenAI fake counts words; the others report 7). */
function outputTokens(provider: Provider, text: string): number {
  return provider === 'openai' ? text.split(/\s+/).filter(Boolean).length : 7;
}

const providers: Provider[] = ['openai', 'anthropic', 'gemini', 'bedrock'];
const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const answerSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: 'number' } },
  required: ['city', 'temp'],
};

describe('cross-format matrix', () => {
  const backend = backendFactories[0]![1]();
  let upstreams: Upstreams;
  let failing: FakeAnthropicServer;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    upstreams = {
      openai: await FakeOpenAiServer.start(),
      anthropic: await FakeAnthropicServer.start(),
      gemini: await FakeGeminiServer.start(),
      bedrock: await FakeBedrockServer.start(),
    };
    failing = await FakeAnthropicServer.start();
    const bedrockParams = `provider: bedrock, model: anthropic.claude-test, api_base: "${upstreams.bedrock.origin}", aws_region_name: ${FAKE_ACCOUNT.region}, aws_access_key_id: ${FAKE_ACCOUNT.accessKeyId}, aws_secret_access_key: "${FAKE_ACCOUNT.secretAccessKey}"`;
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: m-openai
    params: { provider: openai, model: gpt-up, api_base: "${upstreams.openai.baseUrl}", api_key: sk-up }
    model_info: { input_cost_per_token: 0.000001, output_cost_per_token: 0.00002, cache_read_input_token_cost: 0.0000001 }
  - model_name: m-anthropic
    params: { provider: anthropic, model: claude-up, api_base: "${upstreams.anthropic.origin}", api_key: sk-ant }
    model_info: { input_cost_per_token: 0.000001, output_cost_per_token: 0.00002, cache_read_input_token_cost: 0.0000001 }
  - model_name: m-gemini
    params: { provider: gemini, model: gemini-up, api_base: "${upstreams.gemini.origin}", api_key: g-key }
    model_info: { input_cost_per_token: 0.000001, output_cost_per_token: 0.00002, cache_read_input_token_cost: 0.0000001 }
  - model_name: m-bedrock
    params: { ${bedrockParams} }
    model_info: { input_cost_per_token: 0.000001, output_cost_per_token: 0.00002, cache_read_input_token_cost: 0.0000001 }
  - model_name: "gemini/*"
    params: { provider: gemini, model: "*", api_base: "${upstreams.gemini.origin}", api_key: g-key }
  - model_name: "anthropic/*"
    params: { provider: anthropic, model: "*", api_base: "${upstreams.anthropic.origin}", api_key: sk-ant }
  - model_name: mixed
    params: { provider: anthropic, model: claude-down, api_base: "${failing.origin}", api_key: sk-ant, weight: 1000000 }
    model_info: { id: mixed-anthropic }
  - model_name: mixed
    params: { ${bedrockParams}, weight: 1 }
    model_info: { id: mixed-bedrock }
router_settings:
  num_retries: 1
  retry_after: 0
`,
    });
    const key = await gateway.createKey();
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gateway.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([...Object.values(upstreams ?? {}), failing].map((fake) => fake?.close()));
    await backend.cleanup();
  });
  beforeEach(() => {
    for (const fake of Object.values(upstreams)) fake.reset();
  });

  describe.each(providers)('%s deployments', (provider) => {
    const model = `m-${provider}`;
    const text = 'The weather is fine';

    it('chat: text, stop reason and usage', async () => {
      enqueue(upstreams, provider, { kind: 'text', text });
      const answer = await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(answer.choices[0]).toMatchObject({ message: { content: text }, finish_reason: 'stop' });
      expect(answer.usage?.completion_tokens).toBe(outputTokens(provider, text));
    });

    it('chat: a streamed tool call keeps its name and arguments', async () => {
      enqueue(upstreams, provider, { kind: 'tool', name: 'get_weather', args: { city: 'Oslo' } });
      const stream = await openai.chat.completions.create({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [{ type: 'function', function: { name: weather.name, parameters: weather.schema } }],
      });
      let name = '';
      let args = '';
      let finish: string | null | undefined;
      let usage: unknown;
      for await (const chunk of stream) {
        const call = chunk.choices[0]?.delta.tool_calls?.[0];
        name += call?.function?.name ?? '';
        args += call?.function?.arguments ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect({ name, args: JSON.parse(args), finish }).toEqual({
        name: 'get_weather',
        args: { city: 'Oslo' },
        finish: 'tool_calls',
      });
      expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
    });

    it('chat: JSON output follows the schema', async () => {
      enqueue(upstreams, provider, { kind: 'json', value: { city: 'Oslo', temp: 4 } });
      const answer = await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather as JSON' }],
        response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: answerSchema } },
      });
      expect(JSON.parse(answer.choices[0]!.message.content!)).toEqual({ city: 'Oslo', temp: 4 });
      expect(answer.choices[0]!.finish_reason).toBe('stop');
    });

    it('completions: text, JSON and streamed', async () => {
      enqueue(upstreams, provider, { kind: 'text', text });
      const answer = await openai.completions.create({ model, prompt: 'hi' });
      expect(answer.choices[0]).toMatchObject({ text, finish_reason: 'stop' });
      enqueue(upstreams, provider, { kind: 'text', text });
      let streamed = '';
      for await (const chunk of await openai.completions.create({ model, prompt: 'hi', stream: true }))
        streamed += chunk.choices[0]?.text ?? '';
      expect(streamed).toBe(text);
    });

    it('responses: text with usage, a tool call, JSON output and a stream', async () => {
      enqueue(upstreams, provider, { kind: 'text', text });
      const plain = await openai.responses.create({ model, input: 'hi' });
      expect(plain.output_text).toBe(text);
      expect(plain.usage?.output_tokens).toBe(outputTokens(provider, text));
      enqueue(upstreams, provider, { kind: 'tool', name: 'get_weather', args: { city: 'Oslo' } });
      const tooled = await openai.responses.create({
        model,
        input: 'Weather?',
        tools: [{ type: 'function', name: weather.name, parameters: weather.schema, strict: false }],
      });
      expect(tooled.output[0]).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        arguments: JSON.stringify({ city: 'Oslo' }),
      });
      enqueue(upstreams, provider, { kind: 'json', value: { city: 'Oslo', temp: 4 } });
      const json = await openai.responses.create({
        model,
        input: 'Weather as JSON',
        text: { format: { type: 'json_schema', name: 'weather', schema: answerSchema } },
      });
      expect(JSON.parse(json.output_text)).toEqual({ city: 'Oslo', temp: 4 });
      enqueue(upstreams, provider, { kind: 'text', text });
      let streamed = '';
      let completed: any;
      for await (const event of await openai.responses.create({ model, input: 'hi', stream: true })) {
        if (event.type === 'response.output_text.delta') streamed += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(streamed).toBe(text);
      expect(completed.usage.output_tokens).toBe(outputTokens(provider, text));
    });

    it('messages: text, a tool_use and a streamed answer with usage', async () => {
      enqueue(upstreams, provider, { kind: 'text', text });
      const message = await anthropic.messages.create({
        model,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text })]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.output_tokens).toBe(outputTokens(provider, text));
      enqueue(upstreams, provider, { kind: 'tool', name: 'get_weather', args: { city: 'Oslo' } });
      const tooled = await anthropic.messages.create({
        model,
        max_tokens: 64,
        tools: [{ name: weather.name, input_schema: weather.schema as never }],
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      expect(tooled.stop_reason).toBe('tool_use');
      expect(tooled.content.find((block) => block.type === 'tool_use')).toMatchObject({
        name: 'get_weather',
        input: { city: 'Oslo' },
      });
      enqueue(upstreams, provider, { kind: 'text', text });
      const final = await anthropic.messages
        .stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage();
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text })]);
      expect(final.usage.output_tokens).toBe(outputTokens(provider, text));
    });
  });

  it.each(providers)(
    'records one spend row per request with the usage and cost %s reported (cached tokens at the cached rate)',
    async (provider) => {
      const { db } = gateway.gateway.database;
      const { response } = await openai.chat.completions
        .create({ model: `m-${provider}`, messages: [{ role: 'user', content: 'price me' }] })
        .withResponse();
      const stream = await anthropic.messages.create({
        model: `m-${provider}`,
        max_tokens: 16,
        stream: true,
        messages: [{ role: 'user', content: 'and me' }],
      });
      for await (const _event of stream) {
        // drain to message_stop, written after the record
      }
      const rows = (await db
        .selectFrom('spend_logs')
        .selectAll()
        .where('model', '=', `m-${provider}`)
        .orderBy('created_at', 'desc')
        .limit(2)
        .execute()) as any[];
      const json = rows.find((row) => row.request_id === response.headers.get('x-request-id'))!;
      const messages = rows.find((row) => row.endpoint === '/v1/messages')!;
      expect(json).toMatchObject({
        endpoint: '/v1/chat/completions',
        stream: 0,
        status: 200,
        usage_known: 1,
      });
      expect(messages).toMatchObject({ stream: 1, status: 200, usage_known: 1 });
      for (const row of [json, messages]) {
        const prompt = Number(row.prompt_tokens);
        const cached = Number(row.cached_tokens);
        const completion = Number(row.completion_tokens);
        expect(completion).toBeGreaterThan(0);
        if (provider === 'anthropic') expect(cached).toBe(3);
        expect(row.cost).toBeCloseTo(
          (prompt - cached) * 0.000001 + cached * 0.0000001 + completion * 0.00002,
          12,
        );
      }
    },
  );

  it('fails over between provider kinds inside one group (Anthropic 503 → Bedrock) for every format', async () => {
    for (let index = 0; index < 8; index++) failing.enqueue({ kind: 'error', status: 503 });
    const chat = await openai.chat.completions
      .create({ model: 'mixed', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(chat.data.choices[0]!.message.content).toBe('echo: hi');
    expect(chat.response.headers.get('x-switchboard-deployment')).toBe('mixed-bedrock');
    expect(chat.response.headers.get('x-switchboard-attempts')).toBe('2');
    expect(failing.requests.length).toBeGreaterThanOrEqual(1);
    const message = await anthropic.messages.create({
      model: 'mixed',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'yo' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: yo' });
  });

  it('sends a wildcard group the model the caller named, in the path (Gemini) and the body (Anthropic)', async () => {
    await openai.chat.completions.create({
      model: 'gemini/gemini-2.5-pro',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(upstreams.gemini.requests[0]!.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    await openai.chat.completions.create({
      model: 'anthropic/claude-opus-4',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(upstreams.anthropic.requests[0]!.body.model).toBe('claude-opus-4');
  });

  it('drops unsigned thinking blocks (another provider’s reasoning) from a native Messages body, keeps signed ones', async () => {
    const messages = [
      { role: 'user', content: 'first' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'from another model', signature: '' },
          { type: 'thinking', thinking: 'from Anthropic', signature: 'sig-1' },
          { type: 'text', text: 'answer' },
        ],
      },
      { role: 'user', content: 'second' },
    ];
    await anthropic.messages.create({ model: 'm-anthropic', max_tokens: 32, messages } as never);
    expect(upstreams.anthropic.requests[0]!.body.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'from Anthropic', signature: 'sig-1' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('passes a Messages caller through natively to an Anthropic deployment, events untouched', async () => {
    const body = {
      model: 'm-anthropic',
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'hi' }],
    };
    const message = await anthropic.messages.create(body as never);
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'echo: hi' })]);
    // The caller's own fields (thinking, cache_control) reach Anthropic as they were sent.
    expect(upstreams.anthropic.requests[0]!.body).toEqual({ ...body, model: 'claude-up' });
    const stream = await fetch(`${gateway.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': anthropic.apiKey as string, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const events = [...(await stream.text()).matchAll(/^event: (.*)$/gm)].map((match) => match[1]);
    expect(events[0]).toBe('message_start');
    expect(events).toContain('ping');
    expect(events.at(-1)).toBe('message_stop');
    expect(events.filter((event) => event === 'message_stop')).toHaveLength(1);
    expect(upstreams.anthropic.requests[1]!.body).toEqual({ ...body, model: 'claude-up', stream: true });
  });
});
