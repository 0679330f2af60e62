/** The price of every deployment (model_info overrides over the bundled table) and the cost of an attempt's usage. */
import type { BilledUnits } from '../canonical/modalities.ts';
import type { Usage } from '../canonical/usage.ts';
import type { Config, ModelDeploymentConfig, ModelInfo } from '../config/config.ts';
import { callCost } from './call-cost.ts';
import { priceWarning } from './price-modes.ts';
import { hasPriceTable, tablePrices } from './price-table.ts';
import type { ModelPrices } from './token-cost.ts';

export type { ModelPrices } from './token-cost.ts';

/** Distinct upstream models remembered per wildcard book; past it the memory starts over (callers name models). */
const WILDCARD_MEMORY = 1024;

interface Deployment {
  provider: string;
  /** The deployment's own price (overrides over the table); undefined when no rate is known or priced per call. */
  prices: ModelPrices | undefined;
  /** Set for a wildcard deployment without base_model: the table is read by the model the caller named. */
  wildcard?: { overrides: Partial<ModelPrices> };
}

export class PriceBook {
  readonly #deployments: ReadonlyMap<string, Deployment>;
  readonly #wildcardPrices = new Map<string, ModelPrices | null>();

  private constructor(deployments: ReadonlyMap<string, Deployment>) {
    this.#deployments = deployments;
  }

  /** Prices of every deployment: model_info overrides, else the table by model_info.base_model when set, else by (provider, model); `warnings` names each deployment without a price its mode can use. */
  static fromConfig(config: Config): { book: PriceBook; warnings: string[] } {
    const deployments = new Map<string, Deployment>();
    const warnings: string[] = [];
    config.model_list.forEach((entry, index) => {
      const deployment = priceDeployment(entry);
      deployments.set(entry.model_info.id, deployment);
      const fromTable = deployment.wildcard !== undefined && hasPriceTable(deployment.provider);
      const warning = priceWarning(entry, index, deployment.prices, fromTable);
      if (warning !== undefined) warnings.push(warning);
    });
    return { book: new PriceBook(deployments), warnings };
  }

  pricesOf(deploymentId: string): ModelPrices | undefined {
    return this.#deployments.get(deploymentId)?.prices;
  }

  /** USD of one provider attempt: its billed units (images, audio seconds, searches, characters) when each has a rate, else its tokens (call-cost.ts); null when neither usage nor units are known, or a needed price is unknown. `upstreamModel` prices a wildcard deployment (`model: "*"`) by the model the caller named. */
  costOf(
    deploymentId: string,
    usage: Usage | undefined,
    upstreamModel?: string,
    units?: BilledUnits,
  ): number | null {
    if (usage === undefined && units === undefined) return null;
    const deployment = this.#deployments.get(deploymentId);
    if (deployment === undefined) return null;
    const prices =
      deployment.prices ??
      (deployment.wildcard && upstreamModel !== undefined
        ? this.#wildcardPricesOf(deploymentId, deployment, upstreamModel)
        : undefined);
    return prices === undefined ? null : callCost(prices, usage, units);
  }

  #wildcardPricesOf(deploymentId: string, deployment: Deployment, model: string): ModelPrices | undefined {
    const key = `${deploymentId}\u0000${model}`;
    let prices = this.#wildcardPrices.get(key);
    if (prices === undefined) {
      if (this.#wildcardPrices.size >= WILDCARD_MEMORY) this.#wildcardPrices.clear();
      const overrides = deployment.wildcard?.overrides ?? {};
      prices = withOverrides(tablePrices(deployment.provider, model), overrides) ?? null;
      this.#wildcardPrices.set(key, prices);
    }
    return prices ?? undefined;
  }
}

function priceDeployment(entry: ModelDeploymentConfig): Deployment {
  const { provider, model } = entry.params;
  const overrides = overridesOf(entry.model_info);
  const baseModel = entry.model_info.base_model;
  if (baseModel === undefined && model.includes('*')) {
    return { provider, prices: withOverrides(undefined, overrides), wildcard: { overrides } };
  }
  const table = baseModel === undefined ? tablePrices(provider, model) : baseModelPrices(provider, baseModel);
  return { provider, prices: withOverrides(table, overrides) };
}

/** base_model as LiteLLM writes it: bare (`gpt-4o`) for the deployment's provider, or prefixed (`azure/gpt-4o`). */
function baseModelPrices(provider: string, baseModel: string): ModelPrices | undefined {
  const own = tablePrices(provider, baseModel);
  if (own !== undefined) return own;
  const slash = baseModel.indexOf('/');
  return slash > 0 ? tablePrices(baseModel.slice(0, slash), baseModel.slice(slash + 1)) : undefined;
}

/** LiteLLM's model_info cost keys (input_cost_per_image is its per input image rate: no call counts input images). */
function overridesOf(info: Readonly<ModelInfo>): Partial<ModelPrices> {
  const overrides: Partial<ModelPrices> = {};
  const fields: ReadonlyArray<[keyof ModelPrices, number | undefined]> = [
    ['inputPerToken', info.input_cost_per_token],
    ['outputPerToken', info.output_cost_per_token],
    ['cachedInputPerToken', info.cache_read_input_token_cost],
    ['cacheCreationPerToken', info.cache_creation_input_token_cost],
    ['reasoningPerToken', info.output_cost_per_reasoning_token],
    ['audioInputPerToken', info.input_cost_per_audio_token],
    ['audioOutputPerToken', info.output_cost_per_audio_token],
    ['perImage', info.output_cost_per_image],
    ['perAudioSecond', info.input_cost_per_second],
    ['perRerankSearch', info.input_cost_per_query],
    ['perCharacter', info.input_cost_per_character],
  ];
  for (const [field, value] of fields) if (value !== undefined) Object.assign(overrides, { [field]: value });
  return overrides;
}

/** The table's prices with the file's overrides on top; undefined when no rate at all is known. */
function withOverrides(
  table: ModelPrices | undefined,
  overrides: Partial<ModelPrices>,
): ModelPrices | undefined {
  const merged = { ...table, ...overrides };
  if (Object.keys(merged).every((key) => key === 'tiers')) return undefined;
  // A token rate set in the file is flat: the table's long-context tiers would contradict it.
  const flat =
    overrides.inputPerToken !== undefined ||
    overrides.outputPerToken !== undefined ||
    overrides.cachedInputPerToken !== undefined ||
    overrides.cacheCreationPerToken !== undefined;
  const { tiers, ...rest } = merged;
  return flat || tiers === undefined ? (rest as ModelPrices) : { ...(rest as ModelPrices), tiers };
}
