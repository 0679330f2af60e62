import { describe, expect, it } from 'vitest';
import { hasPriceTable, tablePrices } from './price-table.ts';
import type { ModelPrices } from './token-cost.ts';

/** USD per million tokens, rounded past float noise, for readable expectations. */
function perMillion(prices: ModelPrices | undefined): Record<string, unknown> | undefined {
  if (prices === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(prices).map(([key, value]) => [
      key,
      typeof value === 'number' ? Math.round(value * 1e12) / 1e6 : value,
    ]),
  );
}

describe('the bundled price table', () => {
  it('reads per-million prices as USD per token, with the cached and cache-write rates', () => {
    expect(tablePrices('openai', 'gpt-4o')).toEqual({
      inputPerToken: 2.5e-6,
      outputPerToken: 10e-6,
      cachedInputPerToken: 1.25e-6,
    });
    expect(perMillion(tablePrices('anthropic', 'claude-3-5-haiku-latest'))).toEqual({
      inputPerToken: 0.8,
      outputPerToken: 4,
      cachedInputPerToken: 0.08,
      cacheCreationPerToken: 1,
    });
  });

  it('covers the providers a gateway fronts, under our provider names', () => {
    const known: Array<[string, string]> = [
      ['openai', 'gpt-4.1-mini'],
      ['azure', 'gpt-4o'],
      ['anthropic', 'claude-sonnet-4-20250514'],
      ['gemini', 'gemini-2.5-flash'],
      ['bedrock', 'anthropic.claude-3-5-sonnet-20240620-v1:0'],
      ['bedrock', 'amazon.nova-pro-v1:0'],
      ['bedrock', 'meta.llama3-1-70b-instruct-v1:0'],
      ['mistral', 'mistral-large-latest'],
      ['groq', 'llama-3.3-70b-versatile'],
      ['deepseek', 'deepseek-chat'],
      ['xai', 'grok-3-mini'],
    ];
    expect(known.filter(([provider, model]) => tablePrices(provider, model) === undefined)).toEqual([]);
  });

  it("strips route prefixes (Bedrock's converse/, Gemini's models/) and Bedrock's geographic profiles", () => {
    const haiku = tablePrices('bedrock', 'anthropic.claude-3-haiku-20240307-v1:0');
    expect(haiku).toBeDefined();
    expect(tablePrices('bedrock', 'converse/anthropic.claude-3-haiku-20240307-v1:0')).toEqual(haiku);
    expect(tablePrices('bedrock', 'eu.anthropic.claude-3-haiku-20240307-v1:0')).toEqual(haiku);
    expect(tablePrices('bedrock', 'us.amazon.nova-micro-v1:0')).toEqual(
      tablePrices('bedrock', 'amazon.nova-micro-v1:0'),
    );
    expect(tablePrices('gemini', 'models/gemini-2.0-flash')).toEqual(
      tablePrices('gemini', 'gemini-2.0-flash'),
    );
  });

  it('keeps the dated price of a dated model that cost something else (gpt-4o-2024-05-13)', () => {
    expect(tablePrices('openai', 'gpt-4o-2024-05-13')).toMatchObject({
      inputPerToken: 5e-6,
      outputPerToken: 15e-6,
    });
  });

  it('carries long-context tiers (Gemini 2.5 Pro above 200k prompt tokens)', () => {
    expect(tablePrices('gemini', 'gemini-2.5-pro')).toMatchObject({
      inputPerToken: 1.25e-6,
      outputPerToken: 10e-6,
      tiers: [
        {
          aboveInputTokens: 200_000,
          inputPerToken: 2.5e-6,
          outputPerToken: 15e-6,
          cachedInputPerToken: 0.25e-6,
        },
      ],
    });
  });

  it('converts per-hour audio prices to per second', () => {
    expect(tablePrices('groq', 'whisper-large-v3')?.perAudioSecond).toBeCloseTo(0.111 / 3600, 12);
  });

  it('knows nothing of unknown models and of providers it does not cover; fake costs nothing', () => {
    expect(tablePrices('openai', 'gpt-4o-banana')).toBeUndefined();
    expect(tablePrices('hosted_vllm', 'gpt-4o')).toBeUndefined();
    expect(hasPriceTable('hosted_vllm')).toBe(false);
    expect(tablePrices('fake', 'anything')).toEqual({ inputPerToken: 0, outputPerToken: 0 });
  });
});
