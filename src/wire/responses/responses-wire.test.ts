/** The Responses wire format: input items to chat, stateless refusals, the event sequence out. */
import { describe, expect, it } from 'vitest';
import { chunksOf, collectText, parseEvents, testChunks } from '../../../test/support/wire-chunks.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeResponsesRequest } from './decode-responses-request.ts';
import { encodeResponse } from './encode-response.ts';
import { encodeResponsesStream } from './encode-responses-stream.ts';

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    decodeResponsesRequest({ model: 'm', input: 'x', ...body });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a 400');
}

describe('decodeResponsesRequest', () => {
  it('maps messages, function calls and their outputs, tools, MCP tools and settings to chat', () => {
    const { request } = decodeResponsesRequest({
      model: 'm',
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'hi' },
            { type: 'input_image', image_url: 'data:image/png;base64,AA' },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Calling.' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"x":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ],
      tools: [
        { type: 'function', name: 'f', parameters: { type: 'object' }, strict: true },
        { type: 'mcp', server_label: 'github', require_approval: 'never' },
      ],
      tool_choice: { type: 'function', name: 'f' },
      max_output_tokens: 50,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_object' } },
    });
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Calling.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
    ]);
    expect(request).toMatchObject({
      max_tokens: 50,
      reasoning_effort: 'low',
      response_format: { type: 'json_object' },
      tool_choice: { type: 'function', function: { name: 'f' } },
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } },
        { type: 'mcp', server: 'github', require_approval: 'never' },
      ],
    });
  });

  it('refuses stored state and unsupported items with 400 naming the field', () => {
    for (const [body, param] of [
      [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
      [{ store: true }, 'store'],
      [{ background: true }, 'background'],
      [{ input: [] }, 'input'],
      [{ input: [{ type: 'item_reference', id: 'x' }] }, 'input[0].type'],
      [{ input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
      [
        { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
        'input[0].content[0].type',
      ],
      [{ tools: [{ type: 'web_search' }] }, 'tools[0].type'],
      [{ tool_choice: 'sometimes' }, 'tool_choice'],
      [{ max_output_tokens: 0 }, 'max_output_tokens'],
      [{ text: { format: { type: 'json_schema' } } }, 'text.format.schema'],
    ] as const) {
      expect(refusal(body).param, param).toBe(param);
    }
    expect(() => decodeResponsesRequest({ model: 'm', input: 'x', store: false })).not.toThrow();
  });

  it('refuses max_tokens with a 400 that says to use max_output_tokens, instead of dropping the cap (issue 25)', () => {
    const error = refusal({ max_tokens: 5 });
    expect(error).toMatchObject({ status: 400, param: 'max_tokens' });
    expect(error.message).toContain('max_output_tokens');
  });

  it('refuses an unknown field or an unsupported setting by name, never drops it silently (issue 25)', () => {
    for (const [body, param] of [
      [{ temprature: 0.2 }, 'temprature'],
      [{ max_completion_tokens: 5 }, 'max_completion_tokens'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ truncation: 'auto' }, 'truncation'],
      [{ max_tool_calls: 3 }, 'max_tool_calls'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ include: ['message.output_text.logprobs'] }, 'include[0]'],
      [{ include: 'reasoning.encrypted_content' }, 'include'],
      [{ stream_options: { include_obfuscation: true } }, 'stream_options'],
      [{ reasoning: { effort: 'low', summary: 'auto' } }, 'reasoning.summary'],
      [{ reasoning: { effort: 3 } }, 'reasoning.effort'],
      [{ text: { format: { type: 'text' }, style: 'terse' } }, 'text.style'],
      [{ parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
      [{ user: 42 }, 'user'],
      [{ metadata: ['x'] }, 'metadata'],
    ] as const) {
      const error = refusal(body);
      expect(error.status, param).toBe(400);
      expect(error.param, param).toBe(param);
    }
  });

  it('carries the fields chat shares and accepts the neutral values of the others (issue 25)', () => {
    const { request } = decodeResponsesRequest({
      model: 'm',
      input: 'x',
      service_tier: 'flex',
      prompt_cache_key: 'k',
      safety_identifier: 'u1',
      text: { verbosity: 'low' },
      truncation: 'disabled',
      include: ['reasoning.encrypted_content'],
      stream_options: { include_obfuscation: false },
      top_logprobs: null,
      metadata: { a: 'b' },
    });
    expect(request).toMatchObject({
      service_tier: 'flex',
      prompt_cache_key: 'k',
      safety_identifier: 'u1',
      verbosity: 'low',
    });
    for (const absent of ['truncation', 'include', 'stream_options', 'top_logprobs', 'metadata'])
      expect(request, absent).not.toHaveProperty(absent);
  });
});

const echo = decodeResponsesRequest({ model: 'm', input: 'x' }).echo;

describe('encodeResponse', () => {
  it('answers a length-cut answer as incomplete with max_output_tokens as the reason', () => {
    const response = JSON.parse(
      encodeResponse(
        {
          id: 'c',
          object: 'chat.completion',
          created: 5,
          model: 'u',
          choices: [
            {
              index: 0,
              finish_reason: 'length',
              logprobs: null,
              message: { role: 'assistant', content: 'cut' },
            },
          ],
          usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
        },
        echo,
      ),
    );
    expect(response).toMatchObject({
      object: 'response',
      created_at: 5,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      model: 'm',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'cut' }] }],
      usage: { input_tokens: 2, output_tokens: 1, total_tokens: 3 },
      store: false,
    });
  });
});

describe('encodeResponsesStream', () => {
  it('numbers events in sequence and writes response.completed with usage, then [DONE]', async () => {
    const events = parseEvents(
      await collectText(
        encodeResponsesStream(
          chunksOf([
            testChunks.role(),
            testChunks.text('Hi'),
            testChunks.toolStart(0, 'call_1', 'f'),
            testChunks.toolArguments(0, '{}'),
            testChunks.finish('tool_calls'),
            testChunks.usage({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }),
          ]),
          echo,
          7,
        ),
      ),
    );
    expect(events.at(-1)!.data).toBe('[DONE]');
    const typed = events.slice(0, -1);
    expect(typed.map((event) => event.data.sequence_number)).toEqual(typed.map((_event, index) => index));
    expect(typed.every((event) => event.event === event.data.type)).toBe(true);
    const completed = typed.at(-1)!.data.response;
    expect(typed.at(-1)!.event).toBe('response.completed');
    expect(completed.output).toMatchObject([
      { type: 'message', status: 'completed', content: [{ text: 'Hi' }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' },
    ]);
    expect(completed.usage).toMatchObject({ input_tokens: 2, output_tokens: 3 });
  });

  it('ends a failed stream with response.failed and an error event, without [DONE]', async () => {
    const failure = new GatewayError({
      status: 502,
      type: 'api_error',
      code: 'upstream_error',
      message: 'broke',
    });
    const events = parseEvents(
      await collectText(encodeResponsesStream(chunksOf([testChunks.text('Hi')], failure), echo, 7)),
    );
    expect(events.slice(-2).map((event) => event.event)).toEqual(['response.failed', 'error']);
    expect(events.at(-2)!.data.response).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_error' },
    });
    expect(events.some((event) => event.data === '[DONE]')).toBe(false);
  });
});
