import { describe, expect, it } from 'vitest';
import { finishReasonOf, fromGeminiResponse, usageOf } from './from-gemini-response.ts';

const identity = { requestId: 'req-1', model: 'gemini-2.5-flash', created: 1_700_000_000 };

describe('fromGeminiResponse', () => {
  it('joins text parts and falls back to the request id and the deployment model', () => {
    const completion = fromGeminiResponse(
      {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'a' }, { text: 'b' }] }, finishReason: 'STOP' },
        ],
      },
      identity,
    );
    expect(completion).toEqual({
      id: 'chatcmpl-req-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'ab' }, finish_reason: 'stop', logprobs: null },
      ],
    });
  });

  it('refuses a blocked prompt and treats other answers without candidates as protocol errors', () => {
    expect(() => fromGeminiResponse({ promptFeedback: { blockReason: 'SAFETY' } }, identity)).toThrow(
      expect.objectContaining({ providerCode: 'prompt_blocked_SAFETY', retryable: false, status: 400 }),
    );
    expect(() => fromGeminiResponse({ candidates: [] }, identity)).toThrow(
      expect.objectContaining({ kind: 'protocol', retryable: true }),
    );
    expect(() => fromGeminiResponse([1], identity)).toThrow(expect.objectContaining({ kind: 'protocol' }));
  });
});

describe('finishReasonOf', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['OTHER', false, 'stop'],
    ['FINISH_REASON_UNSPECIFIED', false, undefined],
    [undefined, false, undefined],
  ])('%s (tool calls: %s) → %s', (reason, calledTools, expected) => {
    expect(finishReasonOf(reason, calledTools)).toBe(expected);
  });
});

describe('usageOf', () => {
  it('counts thinking as completion tokens and sums when the total is missing', () => {
    expect(usageOf({ promptTokenCount: 3, candidatesTokenCount: 4, thoughtsTokenCount: 5 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 9,
      total_tokens: 12,
      completion_tokens_details: { reasoning_tokens: 5 },
    });
    expect(usageOf({ promptTokenCount: -1, candidatesTokenCount: 1.5 })).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
    });
    expect(usageOf(undefined)).toBeUndefined();
  });
});
