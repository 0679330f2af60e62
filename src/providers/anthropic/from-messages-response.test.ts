/** Anthropic Messages → canonical completions, finish reasons and usage. */
import { describe, expect, it } from 'vitest';
import {
  type AnthropicMessage,
  finishReasonOf,
  fromMessagesResponse,
  messagesUsage,
} from './from-messages-response.ts';

const message = (content: AnthropicMessage['content'], stop_reason = 'end_turn'): AnthropicMessage => ({
  id: 'msg_1',
  type: 'message',
  model: 'claude-x',
  content,
  stop_reason,
  usage: { input_tokens: 5, output_tokens: 9 },
});

describe('fromMessagesResponse', () => {
  it('joins text blocks, keeps thinking as reasoning_content and counts usage', () => {
    const response = fromMessagesResponse(
      message([
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'world' },
      ]),
      'fallback',
      undefined,
      1_700_000_000,
    );
    expect(response).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-x',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello world', reasoning_content: 'hmm' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
    });
  });

  it('answers tool_use blocks as tool calls with null content', () => {
    const response = fromMessagesResponse(
      message([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }], 'tool_use'),
      'fallback',
      undefined,
      0,
    );
    expect(response.choices[0]).toMatchObject({
      message: {
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      finish_reason: 'tool_calls',
    });
  });

  it('answers the structured-output tool as JSON content with finish_reason stop', () => {
    const response = fromMessagesResponse(
      message([{ type: 'tool_use', id: 'toolu_1', name: 'json_output', input: { a: 1 } }], 'tool_use'),
      'fallback',
      'json_output',
      0,
    );
    expect(response.choices[0]).toMatchObject({ message: { content: '{"a":1}' }, finish_reason: 'stop' });
    expect(response.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it('maps every stop reason', () => {
    expect(
      ['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal', 'pause_turn', null].map((reason) =>
        finishReasonOf(reason, false),
      ),
    ).toEqual(['stop', 'stop', 'length', 'tool_calls', 'content_filter', 'stop', 'stop']);
  });
});

describe('messagesUsage', () => {
  it('counts cache reads and writes into prompt_tokens and reports them in the details', () => {
    expect(
      messagesUsage({
        input_tokens: 10,
        cache_read_input_tokens: 200,
        cache_creation_input_tokens: 30,
        output_tokens: 4,
      }),
    ).toEqual({
      prompt_tokens: 240,
      completion_tokens: 4,
      total_tokens: 244,
      prompt_tokens_details: { cached_tokens: 200, cache_creation_tokens: 30 },
    });
  });

  it('returns undefined for missing or invalid counts', () => {
    expect(messagesUsage(undefined)).toBeUndefined();
    expect(messagesUsage({ input_tokens: 1 })).toBeUndefined();
    expect(messagesUsage({ input_tokens: -1, output_tokens: 2 })).toBeUndefined();
  });
});
