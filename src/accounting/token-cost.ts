/** A model's prices per unit and the USD cost of one attempt's token usage at those prices. */
import type { Usage } from '../canonical/usage.ts';

/** Token rates that replace the base rates once a prompt is longer than `aboveInputTokens` (long-context pricing). */
export interface PriceTier {
  aboveInputTokens: number;
  inputPerToken: number;
  outputPerToken: number;
  cachedInputPerToken?: number;
  cacheCreationPerToken?: number;
}

/** USD per unit; absent fields are unknown (a model priced only per image or per character has no token rates). */
export interface ModelPrices {
  inputPerToken?: number;
  outputPerToken?: number;
  cachedInputPerToken?: number;
  cacheCreationPerToken?: number;
  reasoningPerToken?: number;
  /** Audio tokens (`prompt_tokens_details.audio_tokens`, `completion_tokens_details.audio_tokens`). */
  audioInputPerToken?: number;
  audioOutputPerToken?: number;
  /** Per generated image (LiteLLM's output_cost_per_image). */
  perImage?: number;
  /** Per second of input audio (transcription). */
  perAudioSecond?: number;
  perRerankSearch?: number;
  /** Per character of speech input. */
  perCharacter?: number;
  /** Ascending by threshold; the whole prompt and answer are priced at the highest tier the prompt exceeds. */
  tiers?: readonly PriceTier[];
}

/**
 * USD of one attempt's tokens. `prompt_tokens` includes cached and cache-creation tokens: those are
 * priced at their own rates (the input rate when a rate is unknown), the rest at the input rate.
 * Reasoning tokens are part of `completion_tokens`, priced at the output rate unless a reasoning rate is set.
 * Audio tokens (uncached prompt, and completion) are priced at the audio rates, else the input or output rate.
 * Null when tokens of a kind were used whose rate is unknown; a kind with no tokens needs no rate.
 */
export function tokenCost(prices: ModelPrices, usage: Usage): number | null {
  const rates = ratesFor(prices, usage.prompt_tokens);
  const details = usage.prompt_tokens_details;
  const cached = Math.min(count(details?.cached_tokens), usage.prompt_tokens);
  const creation = Math.min(count(details?.cache_creation_tokens), usage.prompt_tokens - cached);
  const uncached = usage.prompt_tokens - cached - creation;
  const audioIn = Math.min(count(details?.audio_tokens), uncached);
  const completionDetails = usage.completion_tokens_details;
  const reasoning = Math.min(count(completionDetails?.reasoning_tokens), usage.completion_tokens);
  const audioOut = Math.min(count(completionDetails?.audio_tokens), usage.completion_tokens - reasoning);
  const parts: ReadonlyArray<[number, number | undefined]> = [
    [uncached - audioIn, rates.inputPerToken],
    [audioIn, prices.audioInputPerToken ?? rates.inputPerToken],
    [cached, rates.cachedInputPerToken ?? rates.inputPerToken],
    [creation, rates.cacheCreationPerToken ?? rates.inputPerToken],
    [usage.completion_tokens - reasoning - audioOut, rates.outputPerToken],
    [audioOut, prices.audioOutputPerToken ?? rates.outputPerToken],
    [reasoning, prices.reasoningPerToken ?? rates.outputPerToken],
  ];
  let cost = 0;
  for (const [tokens, rate] of parts) {
    if (tokens <= 0) continue;
    if (rate === undefined) return null;
    cost += tokens * rate;
  }
  return cost;
}

type TokenRates = Partial<Omit<PriceTier, 'aboveInputTokens'>>;

function ratesFor(prices: ModelPrices, promptTokens: number): TokenRates {
  let rates: TokenRates = prices;
  for (const tier of prices.tiers ?? []) if (promptTokens > tier.aboveInputTokens) rates = tier;
  return rates;
}

/** A provider's count, or 0 when it is missing or not a non-negative number. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
