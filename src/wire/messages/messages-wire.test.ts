/** The Anthropic Messages wire format: decoding to canonical chat and encoding answers and streams back. */
import { describe, expect, it } from 'vitest';
import { chunksOf, collectText, parseEvents, testChunks } from '../../../test/support/wire-chunks.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeMessagesRequest } from './decode-messages-request.ts';
import { encodeMessage } from './encode-message.ts';
import { encodeMessagesStream } from './encode-messages-stream.ts';

function refusal(body: unknown): GatewayError {
  try {
    decodeMessagesRequest(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a 400');
}

const base = { model: 'm', max_tokens: 16 };

describe('decodeMessagesRequest', () => {
  it('maps system blocks, images, tool_use and tool_result (before the user text) to chat messages', () => {
    const request = decodeMessagesRequest({
      ...base,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } }],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'ok' }],
              is_error: true,
            },
            { type: 'text', text: 'next' },
          ],
        },
      ],
      stop_sequences: ['END'],
      top_k: 5,
      metadata: { user_id: 'u1' },
      tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: ok' },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]);
    expect(request).toMatchObject({
      max_tokens: 16,
      stop: ['END'],
      top_k: 5,
      user: 'u1',
      parallel_tool_calls: false,
      tool_choice: { type: 'function', function: { name: 'f' } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    });
  });

  it('requires max_tokens (spec rule 10) and names every bad field in its 400', () => {
    const cases: Array<[unknown, string | null]> = [
      [{ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'max_tokens'],
      [{ ...base, max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }, 'max_tokens'],
      [{ ...base, messages: [] }, 'messages'],
      [{ ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role'],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'document' }] }] },
        'messages[0].content[0].type',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f' }] }] },
        'messages[0].content[0].type',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file' } }] }] },
        'messages[0].content[0].source',
      ],
      [{ ...base, system: 7, messages: [{ role: 'user', content: 'x' }] }, 'system'],
      [{ ...base, temperature: 'hot', messages: [{ role: 'user', content: 'x' }] }, 'temperature'],
      [
        {
          ...base,
          tools: [{ type: 'web_search_20250305', name: 'web' }],
          messages: [{ role: 'user', content: 'x' }],
        },
        'tools[0]',
      ],
      [
        { ...base, tool_choice: { type: 'maybe' }, messages: [{ role: 'user', content: 'x' }] },
        'tool_choice.type',
      ],
      ['not an object', null],
    ];
    for (const [body, param] of cases) {
      const error = refusal(body);
      expect(error.status, JSON.stringify(body)).toBe(400);
      expect(error.param, JSON.stringify(body)).toBe(param);
    }
  });
});

describe('fields /v1/messages does not translate (issue 25: nothing silently dropped)', () => {
  const messages = [{ role: 'user', content: 'x' }];

  it('refuses a field the Messages API does not have, naming the Messages field to use', () => {
    const renamed = refusal({ ...base, messages, max_completion_tokens: 5 });
    expect(renamed).toMatchObject({ status: 400, param: 'max_completion_tokens' });
    expect(renamed.message).toContain('max_tokens');
    expect(refusal({ ...base, messages, stop: ['x'] }).message).toContain('stop_sequences');
    expect(refusal({ ...base, messages, frobnicate: true })).toMatchObject({
      status: 400,
      param: 'frobnicate',
    });
  });

  it('carries Messages fields chat has no words for over to the chat request as written', () => {
    const request = decodeMessagesRequest({ ...base, messages, service_tier: 'auto', container: 'c1' });
    expect(request).toMatchObject({ service_tier: 'auto', container: 'c1' });
  });

  it("translates extended thinking into chat's reasoning_effort for other providers, never carrying `thinking`", () => {
    const effort = (budget_tokens: number) =>
      decodeMessagesRequest({ ...base, messages, thinking: { type: 'enabled', budget_tokens } });
    expect(effort(1024)).toMatchObject({ reasoning_effort: 'low' });
    expect(effort(2048)).toMatchObject({ reasoning_effort: 'medium' });
    expect(effort(32_000)).toMatchObject({ reasoning_effort: 'high' });
    expect(effort(1024)).not.toHaveProperty('thinking');
    const disabled = decodeMessagesRequest({ ...base, messages, thinking: { type: 'disabled' } });
    expect(disabled).not.toHaveProperty('reasoning_effort');
    expect(disabled).not.toHaveProperty('thinking');
    for (const thinking of [
      { type: 'enabled' },
      { type: 'enabled', budget_tokens: -1 },
      'yes',
      { type: 'x' },
    ])
      expect(refusal({ ...base, messages, thinking })).toMatchObject({ status: 400, param: 'thinking' });
  });
});

describe('encodeMessage', () => {
  it('answers content blocks, the stop reason and usage with cached tokens counted apart', () => {
    const message = JSON.parse(
      encodeMessage(
        {
          id: 'chatcmpl-9',
          object: 'chat.completion',
          created: 1,
          model: 'upstream',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              logprobs: null,
              message: {
                role: 'assistant',
                content: 'Let me look.',
                tool_calls: [
                  { id: 'call_1', type: 'function', function: { name: 'f', arguments: 'not json' } },
                ],
              },
            },
          ],
          usage: {
            prompt_tokens: 10,
            completion_tokens: 4,
            total_tokens: 14,
            prompt_tokens_details: { cached_tokens: 3 },
          },
        },
        'public-model',
      ),
    );
    expect(message).toEqual({
      id: 'msg_9',
      type: 'message',
      role: 'assistant',
      model: 'public-model',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 7,
        output_tokens: 4,
        cache_read_input_tokens: 3,
        cache_creation_input_tokens: 0,
      },
    });
  });
});

describe('encodeMessagesStream', () => {
  it('writes message_start, blocks per run of text or tool call, then message_delta and message_stop last', async () => {
    const text = await collectText(
      encodeMessagesStream(
        chunksOf([
          testChunks.role(),
          testChunks.text('Hel'),
          testChunks.text('lo'),
          testChunks.toolStart(0, 'call_1', 'f'),
          testChunks.toolArguments(0, '{"a"'),
          testChunks.toolArguments(0, ':1}'),
          testChunks.finish('tool_calls'),
          testChunks.usage({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }),
        ]),
        'public-model',
      ),
    );
    const events = parseEvents(text);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]!.data.message).toMatchObject({ id: 'msg_1', model: 'public-model', role: 'assistant' });
    expect(events[6]!.data).toMatchObject({
      index: 1,
      content_block: { type: 'tool_use', id: 'call_1', name: 'f' },
    });
    expect(events[7]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"a"' });
    expect(events[10]!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: {
        input_tokens: 5,
        output_tokens: 2,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  });

  it('ends a failed stream with an error event and no message_stop (the answer is incomplete)', async () => {
    const failure = new GatewayError({
      status: 502,
      type: 'api_error',
      code: 'upstream_error',
      message: 'broke',
    });
    const events = parseEvents(
      await collectText(
        encodeMessagesStream(chunksOf([testChunks.role(), testChunks.text('Hi')], failure), 'm'),
      ),
    );
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'broke (upstream_error)' } },
    });
    expect(events.some((event) => event.event === 'message_stop')).toBe(false);
  });
});
