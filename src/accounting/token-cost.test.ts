import { describe, expect, it } from 'vitest';
import type { Usage } from '../canonical/usage.ts';
import { type ModelPrices, tokenCost } from './token-cost.ts';

const prices: ModelPrices = {
  inputPerToken: 2e-6,
  outputPerToken: 10e-6,
  cachedInputPerToken: 0.5e-6,
  cacheCreationPerToken: 2.5e-6,
};

function usage(prompt: number, completion: number, extra: Partial<Usage> = {}): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...extra,
  };
}

describe('tokenCost', () => {
  it('prices prompt tokens at the input rate and completion tokens at the output rate', () => {
    expect(tokenCost(prices, usage(1000, 100))).toBeCloseTo(1000 * 2e-6 + 100 * 10e-6, 12);
  });

  it('prices cached prompt tokens at the cached rate, taken out of prompt_tokens', () => {
    const cost = tokenCost(prices, usage(1000, 0, { prompt_tokens_details: { cached_tokens: 800 } }));
    expect(cost).toBeCloseTo(200 * 2e-6 + 800 * 0.5e-6, 12);
  });

  it('prices cache-creation tokens at the creation rate, or the input rate when it is unknown', () => {
    const details = { prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 300 } };
    expect(tokenCost(prices, usage(1000, 0, details))).toBeCloseTo(
      600 * 2e-6 + 100 * 0.5e-6 + 300 * 2.5e-6,
      12,
    );
    const { cacheCreationPerToken: _, ...withoutCreation } = prices;
    expect(tokenCost(withoutCreation, usage(1000, 0, details))).toBeCloseTo(900 * 2e-6 + 100 * 0.5e-6, 12);
  });

  it('prices cached tokens at the input rate when the cached rate is unknown', () => {
    const flat: ModelPrices = { inputPerToken: 1e-6, outputPerToken: 1e-6 };
    expect(tokenCost(flat, usage(1000, 0, { prompt_tokens_details: { cached_tokens: 500 } }))).toBeCloseTo(
      1000e-6,
      12,
    );
  });

  it('prices reasoning tokens inside completion_tokens at the output rate unless a reasoning rate is set', () => {
    const details = { completion_tokens_details: { reasoning_tokens: 60 } };
    expect(tokenCost(prices, usage(0, 100, details))).toBeCloseTo(100 * 10e-6, 12);
    expect(tokenCost({ ...prices, reasoningPerToken: 1e-6 }, usage(0, 100, details))).toBeCloseTo(
      40 * 10e-6 + 60 * 1e-6,
      12,
    );
  });

  it('prices audio tokens at the audio rates (gpt-4o-transcribe, gpt-audio), or the input and output rates when unknown', () => {
    const audio: ModelPrices = { ...prices, audioInputPerToken: 40e-6, audioOutputPerToken: 80e-6 };
    const spoken = usage(1000, 200, {
      prompt_tokens_details: { cached_tokens: 100, audio_tokens: 600 },
      completion_tokens_details: { reasoning_tokens: 20, audio_tokens: 150 },
    });
    expect(tokenCost(audio, spoken)).toBeCloseTo(
      300 * 2e-6 + 600 * 40e-6 + 100 * 0.5e-6 + 30 * 10e-6 + 150 * 80e-6 + 20 * 10e-6,
      12,
    );
    expect(tokenCost(prices, spoken)).toBeCloseTo(900 * 2e-6 + 100 * 0.5e-6 + 200 * 10e-6, 12);
    // Never more audio tokens than the uncached prompt or the non-reasoning completion holds.
    const odd = usage(100, 10, {
      prompt_tokens_details: { cached_tokens: 50, audio_tokens: 90 },
      completion_tokens_details: { reasoning_tokens: 5, audio_tokens: 90 },
    });
    expect(tokenCost(audio, odd)).toBeCloseTo(50 * 40e-6 + 50 * 0.5e-6 + 5 * 80e-6 + 5 * 10e-6, 12);
  });

  it('prices the whole request at the long-context tier once the prompt exceeds its threshold', () => {
    const tiered: ModelPrices = {
      inputPerToken: 1e-6,
      outputPerToken: 10e-6,
      tiers: [{ aboveInputTokens: 200_000, inputPerToken: 2e-6, outputPerToken: 15e-6 }],
    };
    expect(tokenCost(tiered, usage(200_000, 10))).toBeCloseTo(200_000 * 1e-6 + 10 * 10e-6, 9);
    expect(tokenCost(tiered, usage(200_001, 10))).toBeCloseTo(200_001 * 2e-6 + 10 * 15e-6, 9);
  });

  it('never counts more cached, creation or reasoning tokens than the totals that hold them', () => {
    const odd = usage(100, 10, {
      prompt_tokens_details: { cached_tokens: 80, cache_creation_tokens: 80 },
      completion_tokens_details: { reasoning_tokens: 50 },
    });
    expect(tokenCost({ ...prices, reasoningPerToken: 0 }, odd)).toBeCloseTo(80 * 0.5e-6 + 20 * 2.5e-6, 12);
  });

  it('ignores detail counts that are not non-negative numbers', () => {
    const bad = usage(100, 0, { prompt_tokens_details: { cached_tokens: -5, cache_creation_tokens: 'x' } });
    expect(tokenCost(prices, bad)).toBeCloseTo(100 * 2e-6, 12);
  });
});
