/** Converse answers as canonical completions: content, reasoning, tool calls, stop reasons and usage. */
import { describe, expect, it } from 'vitest';
import {
  finishReasonOf,
  fromConverseResponse,
  isConverseAnswer,
  usageFromConverse,
} from './from-converse-response.ts';

const meta = {
  id: 'chatcmpl-r1',
  created: 1_700_000_000,
  model: 'anthropic.claude',
  jsonToolName: undefined,
};

describe('fromConverseResponse', () => {
  it('answers tool calls with null content, ids kept and arguments as JSON text', () => {
    const completion = fromConverseResponse(
      {
        output: {
          message: {
            role: 'assistant',
            content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Oslo' } } }],
          },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
      },
      meta,
    );
    expect(completion).toEqual({
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'anthropic.claude',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'tooluse_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('answers the forced structured-output tool as text with finish_reason stop', () => {
    const completion = fromConverseResponse(
      {
        output: {
          message: { content: [{ toolUse: { toolUseId: 't', name: 'json_output', input: { a: 1 } } }] },
        },
        stopReason: 'tool_use',
      },
      { ...meta, jsonToolName: 'json_output' },
    );
    expect(completion.choices[0]).toMatchObject({ message: { content: '{"a":1}' }, finish_reason: 'stop' });
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it('maps every stop reason', () => {
    expect(
      ['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'guardrail_intervened', 'content_filtered'].map(
        finishReasonOf,
      ),
    ).toEqual(['stop', 'stop', 'length', 'tool_calls', 'content_filter', 'content_filter']);
  });

  it('counts cache reads and writes as prompt tokens and reports them in the details', () => {
    expect(usageFromConverse({ inputTokens: 2, outputTokens: 1, cacheReadInputTokens: 8 })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 1,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 8 },
    });
    expect(usageFromConverse({ inputTokens: -1, outputTokens: 1 })).toBeUndefined();
  });

  it('recognizes only Converse answers', () => {
    expect(isConverseAnswer({ output: { message: { content: [] } }, stopReason: 'end_turn' })).toBe(true);
    expect(isConverseAnswer({ choices: [] })).toBe(false);
    expect(isConverseAnswer(null)).toBe(false);
  });
});
