import { describe, expect, it } from 'vitest';
import type { Usage } from '../canonical/usage.ts';
import { callCost } from './call-cost.ts';
import type { ModelPrices } from './token-cost.ts';

function usage(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const tokens: ModelPrices = { inputPerToken: 5e-6, outputPerToken: 40e-6 };

describe('callCost: billed units and tokens (rule: a non-token call is priced per unit)', () => {
  it('prices each unit type at its own rate', () => {
    expect(callCost({ perImage: 0.04 }, undefined, { images: 3 })).toBeCloseTo(0.12, 12);
    expect(callCost({ perAudioSecond: 0.0001 }, undefined, { audioSeconds: 61.5 })).toBeCloseTo(0.00615, 12);
    expect(callCost({ perRerankSearch: 0.002 }, undefined, { searches: 2 })).toBeCloseTo(0.004, 12);
    expect(callCost({ perCharacter: 15e-6 }, undefined, { characters: 1000 })).toBeCloseTo(0.015, 12);
  });

  it('adds up several units of one call when each has its rate', () => {
    const prices: ModelPrices = { perImage: 0.04, perCharacter: 1e-5 };
    expect(callCost(prices, undefined, { images: 1, characters: 100 })).toBeCloseTo(0.041, 12);
  });

  it('prices units alone when every unit has a rate, even when tokens were reported too (a per-image price is the whole price)', () => {
    const prices: ModelPrices = { ...tokens, perImage: 0.042 };
    expect(callCost(prices, usage(20, 4160), { images: 1 })).toBeCloseTo(0.042, 12);
    const reranker: ModelPrices = { inputPerToken: 1e-7, perRerankSearch: 0.002 };
    expect(callCost(reranker, usage(900, 0), { searches: 1 })).toBeCloseTo(0.002, 12);
  });

  it('prices a call by its tokens when a unit has no rate and the provider reported tokens (gpt-image-1 bills images as output tokens)', () => {
    expect(callCost(tokens, usage(20, 4160), { images: 1 })).toBeCloseTo(20 * 5e-6 + 4160 * 40e-6, 12);
    // A token-priced reranker (Jina, TEI) reports one search and its tokens.
    expect(callCost({ inputPerToken: 2e-8 }, usage(1000, 0), { searches: 1 })).toBeCloseTo(2e-5, 12);
  });

  it('is null when a unit has no rate and no tokens price the call', () => {
    expect(callCost(tokens, undefined, { images: 1 })).toBeNull();
    expect(callCost(tokens, usage(0, 0), { images: 1 })).toBeNull();
    expect(callCost({ perImage: 0.04 }, undefined, { characters: 10 })).toBeNull();
    // Tokens reported, but the model has neither the unit's rate nor token rates.
    expect(callCost({ perAudioSecond: 0.0001 }, usage(10, 5), { images: 1 })).toBeNull();
  });

  it('is null when tokens were used whose rate is unknown', () => {
    expect(callCost({ perImage: 0.04 }, usage(10, 5), undefined)).toBeNull();
    expect(callCost({ inputPerToken: 1e-6 }, usage(10, 5), undefined)).toBeNull();
  });

  it('prices the units only when the provider reported zero tokens (an image call with empty usage)', () => {
    expect(callCost({ perImage: 0.04 }, usage(0, 0), { images: 2 })).toBeCloseTo(0.08, 12);
  });

  it('needs no rate for a unit or a token kind with a zero count', () => {
    expect(callCost({ perImage: 0.04 }, undefined, { images: 1, characters: 0 })).toBeCloseTo(0.04, 12);
    expect(callCost({ inputPerToken: 1e-6 }, usage(1000, 0), { images: 0 })).toBeCloseTo(1e-3, 12);
    expect(callCost({}, undefined, { images: 0 })).toBe(0);
  });

  it('ignores unit counts that are not positive finite numbers', () => {
    const odd = { images: Number.NaN, searches: -1, characters: Number.POSITIVE_INFINITY };
    expect(callCost({}, undefined, odd)).toBe(0);
    expect(callCost(tokens, usage(10, 0), odd)).toBeCloseTo(5e-5, 12);
  });

  it('is null when neither usage nor units are known', () => {
    expect(callCost(tokens, undefined, undefined)).toBeNull();
  });
});
