/** The legacy completions wire format: prompt to chat, refusals of spec rules 2 and 3, text_completion out. */
import { describe, expect, it } from 'vitest';
import { chunksOf, collectText, parseEvents, testChunks } from '../../../test/support/wire-chunks.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeCompletionRequest } from './decode-completion-request.ts';
import { encodeCompletionStream } from './encode-completion.ts';

describe('decodeCompletionRequest', () => {
  it('turns the prompt (or each prompt of a list) into user messages and keeps generation settings', () => {
    expect(
      decodeCompletionRequest({
        model: 'm',
        prompt: ['a', 'b'],
        max_tokens: 3,
        stop: '\n',
        echo: false,
        best_of: 1,
      }),
    ).toEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
      max_tokens: 3,
      stop: '\n',
    });
  });

  it('refuses echo, best_of > 1, logprobs, suffix, tools and token prompts with 400 naming the field', () => {
    for (const [extra, param] of [
      [{ echo: true }, 'echo'],
      [{ best_of: 3 }, 'best_of'],
      [{ logprobs: 0 }, 'logprobs'],
      [{ suffix: '' }, 'suffix'],
      [{ functions: [] }, 'functions'],
      [{ prompt: [1, 2, 3] }, 'prompt'],
      [{ prompt: '' }, 'prompt'],
      [{ max_tokens: -1 }, 'max_tokens'],
    ] as const) {
      let caught: unknown;
      try {
        decodeCompletionRequest({ model: 'm', prompt: 'x', ...extra });
      } catch (error) {
        caught = error;
      }
      expect(caught, param).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).param).toBe(param);
    }
  });
});

describe('fields /v1/completions does not translate (issue 25: nothing silently dropped)', () => {
  it('carries every other field over to the chat request under its own name', () => {
    const chat = decodeCompletionRequest({
      model: 'm',
      prompt: 'x',
      top_k: 5,
      response_format: { type: 'json_object' },
      n: 2,
    });
    expect(chat).toMatchObject({ top_k: 5, response_format: { type: 'json_object' }, n: 2 });
  });

  it('refuses messages with a 400 that points at /v1/chat/completions', () => {
    let caught: unknown;
    try {
      decodeCompletionRequest({ model: 'm', prompt: 'x', messages: [] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ status: 400, param: 'messages' });
    expect((caught as GatewayError).message).toContain('/v1/chat/completions');
  });
});

describe('encodeCompletionStream', () => {
  it('writes text chunks and the finish reason, hides usage unless asked, and ends with [DONE]', async () => {
    const chunks = () =>
      chunksOf([
        testChunks.role(),
        testChunks.text('Hi'),
        testChunks.finish('length'),
        testChunks.usage({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }),
      ]);
    const plain = parseEvents(await collectText(encodeCompletionStream(chunks(), false)));
    expect(plain.map((event) => (event.data === '[DONE]' ? '[DONE]' : event.data.choices[0]))).toEqual([
      { text: 'Hi', index: 0, logprobs: null, finish_reason: null },
      { text: '', index: 0, logprobs: null, finish_reason: 'length' },
      '[DONE]',
    ]);
    const withUsage = parseEvents(await collectText(encodeCompletionStream(chunks(), true)));
    expect(withUsage.at(-2)!.data).toMatchObject({
      object: 'text_completion',
      choices: [],
      usage: { total_tokens: 2 },
    });
  });

  it('ends a failed stream with an in-band error and no [DONE]', async () => {
    const failure = new GatewayError({
      status: 502,
      type: 'api_error',
      code: 'upstream_error',
      message: 'broke',
    });
    const events = parseEvents(
      await collectText(encodeCompletionStream(chunksOf([testChunks.text('Hi')], failure), false)),
    );
    expect(events.at(-1)!.data).toEqual({
      error: { message: 'broke', type: 'api_error', param: null, code: 'upstream_error' },
    });
    expect(events.some((event) => event.data === '[DONE]')).toBe(false);
  });
});
