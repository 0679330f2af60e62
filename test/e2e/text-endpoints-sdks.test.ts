/**
 * The text endpoints of issue 11 driven by the official clients: openai against /v1/completions and
 * /v1/responses, @anthropic-ai/sdk against /v1/messages, the Vercel AI SDK's default `openai(model)`
 * (Responses) and `anthropic(model)`, and the OpenAI Agents SDK running one tool-using turn. The fake
 * OpenAI-wire upstream records what it received, so both sides are checked.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import { tool as aiTool, generateText, jsonSchema, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { backendFactories } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('text endpoints through the official SDKs', () => {
  const backend = backendFactories[0]![1]();
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: gpt-test
    params: { provider: openai, model: upstream-gpt, api_base: "${upstream.baseUrl}", api_key: sk-upstream-secret }
    model_info: { id: gpt-test-primary }
  - model_name: embedder
    params: { provider: openai, model: upstream-embed, api_base: "${upstream.baseUrl}" }
    model_info: { mode: embedding }
`,
    });
    key = await gateway.createKey({ models: ['gpt-test', 'embedder'] });
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gateway.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend.cleanup();
  });
  beforeEach(() => upstream.reset());

  describe('openai: /v1/completions', () => {
    it('translates the prompt to a user message and answers a text_completion', async () => {
      const answer = await openai.completions.create({ model: 'gpt-test', prompt: 'ping', max_tokens: 5 });
      expect(answer.object).toBe('text_completion');
      expect(answer.choices[0]).toMatchObject({ text: 'echo: ping', finish_reason: 'stop', index: 0 });
      expect(answer.usage?.total_tokens).toBeGreaterThan(0);
      expect(upstream.requests[0]!.body).toMatchObject({
        model: 'upstream-gpt',
        messages: [{ role: 'user', content: 'ping' }],
        max_tokens: 5,
      });
    });

    it('streams text_completion chunks ended by [DONE], with usage when asked', async () => {
      upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
      const stream = await openai.completions.create({
        model: 'gpt-test',
        prompt: 'count',
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe('one two three');
      expect(usage).toMatchObject({ completion_tokens: 3 });
    });

    it('refuses echo, best_of > 1, logprobs, suffix and tools with 400 naming the field (spec rules 2 and 3)', async () => {
      for (const [field, value] of [
        ['echo', true],
        ['best_of', 2],
        ['logprobs', 1],
        ['suffix', 'x'],
        ['tools', [{ type: 'function', function: { name: 'f' } }]],
      ] as const) {
        const error = await openai.completions
          .create({ model: 'gpt-test', prompt: 'x', [field]: value } as never)
          .catch((caught: unknown) => caught);
        expect(error, field).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(field);
      }
      expect(upstream.requests).toHaveLength(0);
    });
  });

  describe('openai: /v1/responses', () => {
    it('answers input and instructions as a Response with output_text and usage', async () => {
      const response = await openai.responses.create({
        model: 'gpt-test',
        instructions: 'Be brief.',
        input: 'ping',
        max_output_tokens: 16,
      });
      expect(response.object).toBe('response');
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('echo: ping');
      expect(response.usage?.total_tokens).toBeGreaterThan(0);
      expect(upstream.requests[0]!.body).toMatchObject({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'ping' },
        ],
        max_tokens: 16,
      });
    });

    it('streams the Responses event sequence, response.completed last with usage', async () => {
      upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
      const stream = await openai.responses.create({ model: 'gpt-test', input: 'count', stream: true });
      const types: string[] = [];
      let text = '';
      let completed: any;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(text).toBe('one two three');
      expect(types.slice(0, 4)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      expect(types.slice(-4)).toEqual([
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(completed.usage.output_tokens).toBe(3);
      expect(completed.output[0].content[0].text).toBe('one two three');
    });

    it('answers function calls as function_call items and takes function_call_output back', async () => {
      upstream.enqueue({
        kind: 'answer',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
      const first = await openai.responses.create({
        model: 'gpt-test',
        input: 'Weather in Paris?',
        tools: [
          {
            type: 'function',
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: false,
          },
        ],
      });
      const call = first.output.find((item) => item.type === 'function_call');
      expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(upstream.requests[0]!.body.tools[0]).toMatchObject({
        type: 'function',
        function: { name: 'get_weather' },
      });
      await openai.responses.create({
        model: 'gpt-test',
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          call as never,
          {
            type: 'function_call_output',
            call_id: (call as { call_id: string }).call_id,
            output: '{"temp":21}',
          },
        ],
      });
      expect(upstream.requests[1]!.body.messages).toMatchObject([
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', tool_calls: [{ id: 'call_0', function: { name: 'get_weather' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp":21}' },
      ]);
    });

    it('streams a function call as output_item.added and function_call_arguments deltas', async () => {
      upstream.enqueue({
        kind: 'answer',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      });
      const stream = await openai.responses.create({
        model: 'gpt-test',
        input: 'Weather?',
        stream: true,
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
      });
      let args = '';
      let done: any;
      for await (const event of stream) {
        if (event.type === 'response.function_call_arguments.delta') args += event.delta;
        if (event.type === 'response.completed') done = event.response;
      }
      expect(args).toBe('{"city":"Oslo"}');
      expect(done.output[0]).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
      });
    });

    it('maps text.format json_schema to response_format', async () => {
      await openai.responses.create({
        model: 'gpt-test',
        input: 'give json',
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      });
      expect(upstream.requests[0]!.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
      });
    });

    it('refuses stored state with 400: previous_response_id and store true (stateless gateway)', async () => {
      for (const extra of [{ previous_response_id: 'resp_1' }, { store: true }]) {
        const error = await openai.responses
          .create({ model: 'gpt-test', input: 'x', ...extra })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(Object.keys(extra)[0]);
      }
      expect(upstream.requests).toHaveLength(0);
    });

    it('refuses a group of another mode with 400 naming /v1/responses', async () => {
      const error = await openai.responses
        .create({ model: 'embedder', input: 'x' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toContain('/v1/responses');
    });
  });

  describe('@anthropic-ai/sdk: /v1/messages', () => {
    it('answers a message (system, max_tokens, stop_sequences translated) with x-api-key', async () => {
      const message = await anthropic.messages.create({
        model: 'gpt-test',
        max_tokens: 32,
        system: 'Be brief.',
        stop_sequences: ['END'],
        messages: [{ role: 'user', content: 'ping' }],
      });
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'gpt-test',
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: 'echo: ping' }],
      });
      expect(message.usage.output_tokens).toBe(2);
      expect(upstream.requests[0]!.body).toMatchObject({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'ping' },
        ],
        max_tokens: 32,
        stop: ['END'],
      });
    });

    it('accepts the bearer header too (authToken)', async () => {
      const bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: gateway.baseUrl, maxRetries: 0 });
      const message = await bearer.messages.create({
        model: 'gpt-test',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: hi' });
    });

    it('streams with the SDK helper: text deltas, then message_stop with usage', async () => {
      upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
      const stream = anthropic.messages.stream({
        model: 'gpt-test',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'count' }],
      });
      const deltas: string[] = [];
      stream.on('text', (delta) => deltas.push(delta));
      const final = await stream.finalMessage();
      expect(deltas.join('')).toBe('one two three');
      expect(final.content).toEqual([{ type: 'text', text: 'one two three' }]);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage.output_tokens).toBe(3);
    });

    it('translates tool use both ways: tool_use blocks out, tool_result blocks back', async () => {
      upstream.enqueue({
        kind: 'answer',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
      const tools = [
        {
          name: 'get_weather',
          description: 'Weather of a city',
          input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
        },
      ];
      const first = await anthropic.messages.create({
        model: 'gpt-test',
        max_tokens: 64,
        tools,
        tool_choice: { type: 'any' },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((block) => block.type === 'tool_use')!;
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      expect(upstream.requests[0]!.body).toMatchObject({
        tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: tools[0]!.input_schema } }],
      });
      await anthropic.messages.create({
        model: 'gpt-test',
        max_tokens: 64,
        tools,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: '21C' }],
          },
        ],
      });
      expect(upstream.requests[1]!.body.messages.slice(1)).toMatchObject([
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_0', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '21C' },
      ]);
    });

    it('streams a tool call as a tool_use block with input_json_delta', async () => {
      upstream.enqueue({
        kind: 'answer',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      });
      const final = await anthropic.messages
        .stream({
          model: 'gpt-test',
          max_tokens: 64,
          tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
          messages: [{ role: 'user', content: 'Weather?' }],
        })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content[0]).toMatchObject({
        type: 'tool_use',
        name: 'get_weather',
        input: { city: 'Oslo' },
      });
    });

    it('answers errors in the Anthropic error shape the SDK raises', async () => {
      const unknown = await anthropic.messages
        .create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
      expect((unknown as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error' },
      });
      const badKey = new Anthropic({ apiKey: 'sk-wrong', baseURL: gateway.baseUrl, maxRetries: 0 });
      const denied = await badKey.messages
        .create({ model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
      const missing = await fetch(`${gateway.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    });
  });

  describe('Vercel AI SDK', () => {
    it('openai(model) calls /v1/responses: text, stream and a tool call', async () => {
      const provider = createOpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1` });
      const { text, usage } = await generateText({
        model: provider('gpt-test'),
        prompt: 'ping',
        maxRetries: 0,
      });
      expect(text).toBe('echo: ping');
      expect(usage.outputTokens).toBe(2);
      upstream.enqueue({ kind: 'answer', text: 'one two three' });
      const streamed = streamText({ model: provider('gpt-test'), prompt: 'count', maxRetries: 0 });
      expect(await streamed.text).toBe('one two three');
      upstream.enqueue({ kind: 'answer', toolCalls: [{ name: 'weather', arguments: '{"city":"Oslo"}' }] });
      const withTool = await generateText({
        model: provider('gpt-test'),
        prompt: 'Weather?',
        maxRetries: 0,
        tools: {
          weather: aiTool({
            inputSchema: jsonSchema<{ city: string }>({
              type: 'object',
              properties: { city: { type: 'string' } },
            }),
          }),
        },
      });
      expect(withTool.toolCalls[0]).toMatchObject({ toolName: 'weather', input: { city: 'Oslo' } });
      expect(upstream.requests.every((request) => request.path === '/v1/chat/completions')).toBe(true);
    });

    it('anthropic(model) calls /v1/messages: text and stream', async () => {
      const provider = createAnthropic({ apiKey: key, baseURL: `${gateway.baseUrl}/v1` });
      const { text } = await generateText({ model: provider('gpt-test'), prompt: 'ping', maxRetries: 0 });
      expect(text).toBe('echo: ping');
      upstream.enqueue({ kind: 'answer', text: 'one two three' });
      const streamed = streamText({ model: provider('gpt-test'), prompt: 'count', maxRetries: 0 });
      expect(await streamed.text).toBe('one two three');
      expect((await streamed.usage).outputTokens).toBe(3);
    });
  });

  describe('OpenAI Agents SDK', () => {
    it('runs one tool-using turn through /v1/responses with tracing disabled', async () => {
      setTracingDisabled(true);
      setDefaultOpenAIClient(
        new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 }) as never,
      );
      setOpenAIAPI('responses');
      const calls: string[] = [];
      const weather = tool({
        name: 'get_weather',
        description: 'Weather of a city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          calls.push(city);
          return `${city}: 21C`;
        },
      });
      upstream.enqueue(
        { kind: 'answer', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { kind: 'answer', text: 'It is 21C in Paris.' },
      );
      const agent = new Agent({
        name: 'Weather',
        instructions: 'Answer with the tool.',
        model: 'gpt-test',
        tools: [weather],
      });
      const result = await run(agent, 'Weather in Paris?');
      expect(calls).toEqual(['Paris']);
      expect(result.finalOutput).toBe('It is 21C in Paris.');
      expect(upstream.requests).toHaveLength(2);
      expect(upstream.requests[1]!.body.messages.at(-1)).toMatchObject({
        role: 'tool',
        content: 'Paris: 21C',
      });
    });
  });
});
