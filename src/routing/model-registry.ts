/**
 * The runtime model registry: model groups (one per public model name) and their deployments, each
 * with its provider adapter. Built once from the configuration; provider params are checked by the
 * provider's own validator and problems are reported with their configuration path.
 */

import type { Config, ModelDeploymentConfig, RouterSettings } from '../config/config.ts';
import { ConfigError } from '../config/config-error.ts';
import { closestMatch } from '../lib/closest-match.ts';
import {
  CAPABILITY_MODES,
  type DeploymentSettings,
  type ProviderAdapter,
} from '../providers/provider-adapter.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { unknownParamProblems } from './unknown-params.ts';

export interface Deployment {
  readonly id: string;
  readonly modelName: string;
  readonly adapter: ProviderAdapter;
  readonly weight: number;
  /** Requests and tokens per minute the deployment can take (model_info.rpm_limit / tpm_limit). */
  readonly rpmLimit: number | undefined;
  readonly tpmLimit: number | undefined;
  readonly maxInputTokens: number | undefined;
  readonly config: ModelDeploymentConfig;
}

export interface ModelGroup {
  readonly name: string;
  readonly ownedBy: string;
  /** `model_info.mode` of the group (LiteLLM's names): which kind of endpoint serves it; `chat` by default. */
  readonly mode: string;
  readonly deployments: readonly Deployment[];
}

export class ModelRegistry {
  /** Epoch seconds when the registry was built (the `created` of /v1/models entries). */
  readonly createdAt: number;
  private readonly byName: ReadonlyMap<string, ModelGroup>;
  private readonly byId: ReadonlyMap<string, Deployment>;
  /** Wildcard groups (`openai/*`, `*`), longest prefix first. */
  private readonly wildcards: readonly ModelGroup[];

  constructor(groups: readonly ModelGroup[], createdAt: number) {
    this.createdAt = createdAt;
    this.byName = new Map(groups.map((group) => [group.name, group]));
    this.wildcards = groups
      .filter((group) => group.name.endsWith('*'))
      .sort((a, b) => b.name.length - a.name.length);
    this.byId = new Map(
      groups.flatMap((group) => group.deployments.map((deployment) => [deployment.id, deployment])),
    );
  }

  /**
   * The group serving `name`: the group of that name, else the wildcard group with the longest
   * matching prefix (`openai/*` serves `openai/gpt-4o`; `*` serves any name no other group serves).
   */
  group(name: string): ModelGroup | undefined {
    const exact = this.byName.get(name);
    if (exact) return exact;
    for (const group of this.wildcards) {
      const prefix = group.name.slice(0, -1);
      if (name.length > prefix.length && name.startsWith(prefix)) return group;
    }
    return undefined;
  }

  groups(): ModelGroup[] {
    return [...this.byName.values()];
  }

  deployment(id: string): Deployment | undefined {
    return this.byId.get(id);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.byId.values()].map((deployment) => deployment.adapter.close()));
  }
}

/**
 * A deployment's params checked by its provider: an unknown provider, the provider's own validation,
 * and params no provider reads (a misspelled address or credential is an error, others warn). The
 * loader runs it with the schema check (one report of every problem), the registry again at build.
 */
export function deploymentProblems(
  params: Readonly<Record<string, unknown>>,
  index: number,
  providers: ProviderRegistry,
): { errors: string[]; warnings: string[] } {
  const path = `model_list[${index}].params`;
  const provider = String(params.provider);
  const factory = providers.get(provider);
  if (!factory) {
    const suggestion = closestMatch(provider, providers.names());
    return {
      errors: [
        `${path}.provider: '${provider}' is not a supported provider${suggestion ? ` (did you mean '${suggestion}'?)` : ''}; supported: ${providers.names().join(', ')}`,
      ],
      warnings: [],
    };
  }
  const unknown = unknownParamProblems(params, factory.knownParams, path);
  const errors = [...factory.validate(params).map((problem) => `${path}.${problem}`), ...unknown.errors];
  return { errors, warnings: unknown.warnings };
}

/** Builds the registry; problems throw a ConfigError, and `warnings` collects params no provider reads. */
export function buildModelRegistry(
  config: Config,
  providers: ProviderRegistry,
  now: number,
  warnings: string[] = [],
): ModelRegistry {
  const issues: string[] = [];
  const groups = new Map<string, { ownedBy: string; mode: string; deployments: Deployment[] }>();
  config.model_list.forEach((entry, index) => {
    const checked = deploymentProblems(entry.params, index, providers);
    warnings.push(...checked.warnings);
    issues.push(...checked.errors);
    const factory = providers.get(entry.params.provider);
    if (!factory || checked.errors.length > 0) return;
    const adapter = factory.create(deploymentSettings(entry, config.router_settings));
    const mode = entry.model_info.mode ?? 'chat';
    const needed = capabilityFor(mode);
    if (needed && !adapter[needed]) {
      issues.push(
        `model_list[${index}].model_info.mode: '${mode}'${entry.model_info.mode === undefined ? ' (the default)' : ''} needs the ${needed} capability, which provider '${entry.params.provider}' does not serve${servedModes(adapter, entry.params.model)}`,
      );
      void adapter.close();
      return;
    }
    const group = groups.get(entry.model_name) ?? {
      ownedBy: entry.model_info.owned_by ?? entry.params.provider,
      mode: entry.model_info.mode ?? 'chat',
      deployments: [],
    };
    if ((entry.model_info.mode ?? 'chat') !== group.mode)
      issues.push(
        `model_list[${index}].model_info.mode: '${entry.model_info.mode ?? 'chat'}' differs from the '${group.mode}' of other deployments of '${entry.model_name}'`,
      );
    group.deployments.push({
      id: entry.model_info.id,
      modelName: entry.model_name,
      adapter,
      weight: entry.params.weight ?? 1,
      rpmLimit: entry.model_info.rpm_limit,
      tpmLimit: entry.model_info.tpm_limit,
      maxInputTokens: entry.model_info.max_input_tokens,
      config: entry,
    });
    groups.set(entry.model_name, group);
  });
  if (issues.length > 0) throw new ConfigError(config.source, issues);
  return new ModelRegistry(
    [...groups].map(([name, group]) => ({
      name,
      ownedBy: group.ownedBy,
      mode: group.mode,
      deployments: group.deployments,
    })),
    Math.floor(now / 1000),
  );
}

/** What a deployment refused for its mode serves instead, for the start-up message (empty: nothing). */
function servedModes(adapter: ProviderAdapter, model: string): string {
  const modes = Object.entries(CAPABILITY_MODES)
    .filter(([capability]) => adapter[capability as keyof typeof CAPABILITY_MODES])
    .flatMap(([, served]) => served);
  return modes.length === 0 ? '' : ` for model '${model}' (it serves model_info.mode ${modes.join(', ')})`;
}

/** The adapter capability that serves a model_info.mode, if any capability does yet. */
function capabilityFor(mode: string): keyof typeof CAPABILITY_MODES | undefined {
  for (const [capability, modes] of Object.entries(CAPABILITY_MODES))
    if (modes.includes(mode)) return capability as keyof typeof CAPABILITY_MODES;
  return undefined;
}

function deploymentSettings(entry: ModelDeploymentConfig, router: RouterSettings): DeploymentSettings {
  const seconds = (value: number) => Math.round(value * 1000);
  return {
    model: entry.params.model,
    params: entry.params,
    ...(entry.model_info.default_params ? { defaultParams: entry.model_info.default_params } : {}),
    timeouts: {
      connectMs: seconds(entry.params.connect_timeout ?? router.connect_timeout),
      headersMs: seconds(entry.params.timeout ?? router.timeout),
      streamIdleMs: seconds(entry.params.stream_timeout ?? router.stream_timeout),
      totalMs: seconds(entry.params.timeout ?? router.timeout),
      poolMs: seconds(router.pool_timeout),
    },
    maxConnections: entry.params.max_connections ?? router.max_connections_per_deployment,
  };
}
