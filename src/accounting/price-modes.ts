/** What price each `model_info.mode` needs to cost its calls, and the start-up warning when a deployment lacks it. */
import type { ModelDeploymentConfig } from '../config/config.ts';
import type { ModelPrices } from './token-cost.ts';

interface Requirement {
  met(prices: ModelPrices): boolean;
  /** What is missing, for the warning. */
  lacks: string;
  /** The model_info keys that would supply it. */
  keys: string;
  /** Whether the bundled table can supply it (through model_info.base_model). */
  table: boolean;
}

const tokenRates = (prices: ModelPrices) =>
  prices.inputPerToken !== undefined && prices.outputPerToken !== undefined;

/** Text modes (chat, completion, responses) and modes not served per unit: input and output token rates. */
const TOKENS: Requirement = {
  met: tokenRates,
  lacks: 'no known price',
  keys: 'model_info.input_cost_per_token and output_cost_per_token',
  table: true,
};

const REQUIREMENTS: Readonly<Record<string, Requirement>> = {
  // An embedding answer has no completion tokens.
  embedding: {
    met: (prices) => prices.inputPerToken !== undefined,
    lacks: 'no known price per input token',
    keys: 'model_info.input_cost_per_token',
    table: true,
  },
  image_generation: {
    met: (prices) => prices.perImage !== undefined || tokenRates(prices),
    lacks: 'no known price per image or per token',
    keys: 'model_info.output_cost_per_image (per generated image), or input_cost_per_token and output_cost_per_token',
    table: true,
  },
  // Speech answers carry no token usage; the bundled table has no per-character prices.
  audio_speech: {
    met: (prices) => prices.perCharacter !== undefined,
    lacks: 'no known price per character',
    keys: 'model_info.input_cost_per_character',
    table: false,
  },
  audio_transcription: {
    met: (prices) => prices.perAudioSecond !== undefined || tokenRates(prices),
    lacks: 'no known price per second of audio or per token',
    keys: 'model_info.input_cost_per_second, or input_cost_per_token and output_cost_per_token',
    table: true,
  },
  // A rerank answer has no completion tokens.
  rerank: {
    met: (prices) => prices.perRerankSearch !== undefined || prices.inputPerToken !== undefined,
    lacks: 'no known price per search or per token',
    keys: 'model_info.input_cost_per_query, or input_cost_per_token',
    table: true,
  },
};

function requirementOf(mode: string | undefined): Requirement {
  return (mode !== undefined && REQUIREMENTS[mode]) || TOKENS;
}

/**
 * The warning for a deployment whose price cannot cost the calls of its mode, or undefined when it can.
 * A wildcard deployment is priced per request from the table, so it is warned about only when the
 * table cannot help (a provider without a table, or a mode the table has no prices for).
 */
export function priceWarning(
  entry: ModelDeploymentConfig,
  index: number,
  prices: ModelPrices | undefined,
  wildcardFromTable: boolean,
): string | undefined {
  const { mode } = entry.model_info;
  const requirement = requirementOf(mode);
  if (prices !== undefined && requirement.met(prices)) return undefined;
  if (wildcardFromTable && requirement.table) return undefined;
  const { provider, model } = entry.params;
  const named =
    entry.model_info.base_model === undefined ? model : `base_model ${entry.model_info.base_model}`;
  const shownMode = requirement === TOKENS ? '' : `, mode ${mode}`;
  const baseModel = requirement.table ? ', or model_info.base_model to a model the price table knows' : '';
  return `model_list[${index}] (deployment ${entry.model_info.id}, ${provider}/${named}${shownMode}): ${requirement.lacks}, so its cost is recorded as null; set ${requirement.keys}${baseModel}`;
}
