/** The bundled price table: the data of @pydantic/genai-prices (offline, MIT), read as USD per unit for our provider names. */
import { calcPrice, type ModelPrice } from '@pydantic/genai-prices';
import type { ModelPrices, PriceTier } from './token-cost.ts';

export const PRICE_TABLE_SOURCE = '@pydantic/genai-prices (https://github.com/pydantic/genai-prices)';

/** Our provider names (LiteLLM's) → the table's provider ids; a provider not listed has no table prices. */
export const TABLE_PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  azure: 'azure',
  anthropic: 'anthropic',
  gemini: 'google',
  bedrock: 'aws',
  groq: 'groq',
  mistral: 'mistral',
  deepseek: 'deepseek',
  xai: 'x-ai',
  together_ai: 'together',
  fireworks_ai: 'fireworks',
  openrouter: 'openrouter',
  perplexity: 'perplexity',
};

/** Route prefixes that name an API flavour, not a model (Bedrock `converse/`, Gemini `models/`). */
const ROUTE_PREFIX = /^(?:converse|invoke|models)\//;
/** Bedrock's geographic inference profiles cost what the model costs in-region (`global.` is priced apart). */
const REGION_PREFIX = /^(?:us|eu|apac|jp|au|ca|us-gov)\./;

/** Providers that answer locally, at no cost, whatever the model and whatever the unit. */
const FREE_PROVIDERS: ReadonlySet<string> = new Set(['fake']);
const FREE: Readonly<ModelPrices> = {
  inputPerToken: 0,
  outputPerToken: 0,
  perImage: 0,
  perAudioSecond: 0,
  perRerankSearch: 0,
  perCharacter: 0,
};

export function hasPriceTable(provider: string): boolean {
  return Object.hasOwn(TABLE_PROVIDERS, provider) || FREE_PROVIDERS.has(provider);
}

/** The table's prices of `model` at `provider` as of `at`, or undefined when the table does not know it. */
export function tablePrices(provider: string, model: string, at: Date = new Date()): ModelPrices | undefined {
  if (FREE_PROVIDERS.has(provider)) return { ...FREE };
  const providerId = TABLE_PROVIDERS[provider];
  if (providerId === undefined) return undefined;
  const id = model.trim().replace(ROUTE_PREFIX, '');
  const candidates = REGION_PREFIX.test(id) ? [id, id.replace(REGION_PREFIX, '')] : [id];
  for (const candidate of candidates) {
    const found = calcPrice({}, candidate, { providerId, timestamp: at });
    if (found) return perUnit(found.model_price);
  }
  return undefined;
}

type Tiered = { base: number; tiers: ReadonlyArray<{ start: number; price: number }> };
type Rate = number | Tiered | undefined;

/** The table's per-million and per-thousand prices as USD per unit; its absent token prices cost nothing. */
function perUnit(price: ModelPrice): ModelPrices {
  const rate = (key: string): Rate => price[key] as Rate;
  const at = (value: Rate, divisor: number, threshold = -1): number | undefined => {
    if (value === undefined) return undefined;
    if (typeof value === 'number') return value / divisor;
    let chosen = value.base;
    for (const tier of value.tiers) if (threshold > tier.start) chosen = tier.price;
    return chosen / divisor;
  };
  const token = (key: string, threshold?: number) => at(rate(key), 1e6, threshold);
  const prices: ModelPrices = {
    inputPerToken: token('input_mtok') ?? 0,
    outputPerToken: token('output_mtok') ?? 0,
  };
  assign(prices, 'cachedInputPerToken', token('cache_read_mtok'));
  assign(prices, 'cacheCreationPerToken', token('cache_write_mtok'));
  assign(prices, 'reasoningPerToken', token('output_reasoning_mtok'));
  assign(prices, 'audioInputPerToken', token('input_audio_mtok'));
  assign(prices, 'audioOutputPerToken', token('output_audio_mtok'));
  assign(prices, 'perAudioSecond', at(rate('input_audio_hours') ?? rate('audio_hours'), 3600));
  assign(prices, 'perRerankSearch', at(rate('rerank_searches_kcount'), 1000));
  const starts = [
    ...new Set(
      ['input_mtok', 'output_mtok', 'cache_read_mtok', 'cache_write_mtok'].flatMap((key) => {
        const value = rate(key);
        return typeof value === 'object' ? value.tiers.map((tier) => tier.start) : [];
      }),
    ),
  ].sort((a, b) => a - b);
  if (starts.length > 0) {
    prices.tiers = starts.map((start) => {
      // Just above the threshold, so each rate takes the tier that starts here.
      const tier: PriceTier = {
        aboveInputTokens: start,
        inputPerToken: token('input_mtok', start + 1) ?? 0,
        outputPerToken: token('output_mtok', start + 1) ?? 0,
      };
      assign(tier, 'cachedInputPerToken', token('cache_read_mtok', start + 1));
      assign(tier, 'cacheCreationPerToken', token('cache_write_mtok', start + 1));
      return tier;
    });
  }
  return prices;
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value as T[K];
}
