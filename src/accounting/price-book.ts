/** The price of every deployment (model_info overrides over the bundled table) and the cost of an attempt's usage. */
import type { BilledUnits } from '../canonical/modalities.ts';
import type { Usage } from '../canonical/usage.ts';
import type { Config, ModelDeploymentConfig, ModelInfo } from '../config/config.ts';
import { hasPriceTable, tablePrices } from './price-table.ts';
import { type ModelPrices, tokenCost } from './token-cost.ts';

export type { ModelPrices } from './token-cost.ts';

/** Distinct upstream models remembered per wildcard book; past it the memory starts over (callers name models). */
const WILDCARD_MEMORY = 1024;

interface Deployment {
  provider: string;
  /** The deployment's own price (overrides over the table); undefined when unknown or priced per call. */
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

  /** Prices of every deployment: model_info overrides, else the table by model_info.base_model when set, else by (provider, model); `warnings` names each deployment without a known price. */
  static fromConfig(config: Config): { book: PriceBook; warnings: string[] } {
    const deployments = new Map<string, Deployment>();
    const warnings: string[] = [];
    config.model_list.forEach((entry, index) => {
      const deployment = priceDeployment(entry);
      deployments.set(entry.model_info.id, deployment);
      if (deployment.prices === undefined && !(deployment.wildcard && hasPriceTable(deployment.provider)))
        warnings.push(unknownPriceWarning(entry, index));
    });
    return { book: new PriceBook(deployments), warnings };
  }

  pricesOf(deploymentId: string): ModelPrices | undefined {
    return this.#deployments.get(deploymentId)?.prices;
  }

  /** USD of one provider attempt's usage; null when usage or the price is unknown. Cached prompt tokens at the cached rate, cache-creation tokens at the creation rate (input rate when absent), reasoning tokens inside completion_tokens priced at the output rate unless a reasoning rate is set. `upstreamModel` prices a wildcard deployment (`model: "*"`) by the model the caller named. */
  costOf(
    deploymentId: string,
    usage: Usage | undefined,
    upstreamModel?: string,
    _units?: BilledUnits,
  ): number | null {
    if (usage === undefined) return null;
    const deployment = this.#deployments.get(deploymentId);
    if (deployment === undefined) return null;
    const prices =
      deployment.prices ??
      (deployment.wildcard && upstreamModel !== undefined
        ? this.#wildcardPricesOf(deploymentId, deployment, upstreamModel)
        : undefined);
    return prices === undefined ? null : tokenCost(prices, usage);
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

/** LiteLLM's model_info cost keys. */
function overridesOf(info: Readonly<ModelInfo>): Partial<ModelPrices> {
  const overrides: Partial<ModelPrices> = {};
  const fields: ReadonlyArray<[keyof ModelPrices, number | undefined]> = [
    ['inputPerToken', info.input_cost_per_token],
    ['outputPerToken', info.output_cost_per_token],
    ['cachedInputPerToken', info.cache_read_input_token_cost],
    ['cacheCreationPerToken', info.cache_creation_input_token_cost],
    ['reasoningPerToken', info.output_cost_per_reasoning_token],
    ['perImage', info.input_cost_per_image],
    ['perAudioSecond', info.input_cost_per_second],
    ['perRerankSearch', info.input_cost_per_query],
  ];
  for (const [field, value] of fields) if (value !== undefined) Object.assign(overrides, { [field]: value });
  return overrides;
}

/** The table's prices with the file's overrides on top; a price needs an input and an output rate. */
function withOverrides(
  table: ModelPrices | undefined,
  overrides: Partial<ModelPrices>,
): ModelPrices | undefined {
  const merged = { ...table, ...overrides };
  if (merged.inputPerToken === undefined || merged.outputPerToken === undefined) return undefined;
  // A token rate set in the file is flat: the table's long-context tiers would contradict it.
  const flat =
    overrides.inputPerToken !== undefined ||
    overrides.outputPerToken !== undefined ||
    overrides.cachedInputPerToken !== undefined ||
    overrides.cacheCreationPerToken !== undefined;
  const { tiers, ...rest } = merged;
  return flat || tiers === undefined ? (rest as ModelPrices) : { ...(rest as ModelPrices), tiers };
}

function unknownPriceWarning(entry: ModelDeploymentConfig, index: number): string {
  const { provider, model } = entry.params;
  const named =
    entry.model_info.base_model === undefined ? model : `base_model ${entry.model_info.base_model}`;
  return `model_list[${index}] (deployment ${entry.model_info.id}, ${provider}/${named}): no known price, so its cost is recorded as null; set model_info.input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows`;
}
