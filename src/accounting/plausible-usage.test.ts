import { describe, expect, it } from 'vitest';
import { answerTokens, estimatedUsage } from './estimated-usage.ts';
import { checkUsage, DEFAULT_USAGE_BOUND, usageBounds } from './plausible-usage.ts';

const usage = (prompt: unknown, completion: unknown, total?: unknown) =>
  ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: total }) as never;

describe('checkUsage (implausible usage is never charged as reported)', () => {
  it('passes a plausible report through as the same object', () => {
    const report = usage(10, 5, 15);
    expect(checkUsage(report, 100)).toEqual({ usage: report, problem: undefined });
    expect(checkUsage(report, 100).usage).toBe(report);
  });

  it('clamps counts above the bound, Infinity (JSON 1e400) included, to the bound', () => {
    expect(checkUsage(usage(1e15, Number.POSITIVE_INFINITY, 2e15), 1000)).toEqual({
      usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 1000 },
      problem: 'above_bound',
    });
  });

  it('charges a negative count as 0 and rounds a fraction up, naming the worst finding', () => {
    expect(checkUsage(usage(-5, 3), 100)).toMatchObject({
      usage: { prompt_tokens: 0, completion_tokens: 3, total_tokens: 3 },
      problem: 'negative',
    });
    expect(checkUsage(usage(2.1, 3), 100)).toMatchObject({
      usage: { prompt_tokens: 3, completion_tokens: 3 },
      problem: 'not_integer',
    });
    expect(checkUsage(usage(-1, 1e9), 100).problem).toBe('above_bound');
  });

  it('finds a report whose prompt or completion is not a number unreadable', () => {
    for (const bad of ['NaN', '12', null, Number.NaN, {}, true])
      expect(checkUsage(usage(bad, 1), 100)).toEqual({ usage: undefined, problem: 'unreadable' });
  });

  it('fills a missing or unreadable total with the sum, without reporting it', () => {
    expect(checkUsage(usage(2, 3), 100)).toEqual({
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
      problem: undefined,
    });
    expect(checkUsage(usage(2, 3, 'x'), 100).usage?.total_tokens).toBe(5);
  });

  it("bounds a call by its model's window when model_info sets both limits, else by 10^7", () => {
    const bound = usageBounds({
      model_list: [
        { model_info: { id: 'a', max_input_tokens: 1000, max_output_tokens: 24 } },
        { model_info: { id: 'b', max_input_tokens: 1000 } },
      ],
    } as never);
    expect([bound('a'), bound('b'), bound('unknown')]).toEqual([
      1024,
      DEFAULT_USAGE_BOUND,
      DEFAULT_USAGE_BOUND,
    ]);
  });
});

describe('estimatedUsage (what a call without a report is charged)', () => {
  it('estimates the prompt as body bytes / 4 and caps the completion at max_tokens', () => {
    expect(estimatedUsage({ bodyBytes: 401, completionTokens: 9, maxTokens: 5 })).toEqual({
      prompt_tokens: 101,
      completion_tokens: 5,
      total_tokens: 106,
    });
    expect(estimatedUsage({ bodyBytes: 8, completionTokens: 9, maxTokens: null }).completion_tokens).toBe(9);
    expect(estimatedUsage({ bodyBytes: 8, completionTokens: 9, maxTokens: 'x' }).completion_tokens).toBe(9);
  });

  it("counts a JSON answer's text, refusal and tool-call arguments at 4 characters a token", () => {
    const answer = {
      choices: [
        {
          message: {
            content: 'abcdefgh',
            refusal: 'no',
            tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
    };
    expect(answerTokens(answer as never)).toBe(Math.ceil((8 + 2 + 1 + 7) / 4));
  });
});
