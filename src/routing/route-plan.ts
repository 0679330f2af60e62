/**
 * Which model groups a request tries, in order: the requested one (or, when its prompt fits no
 * deployment, the first context-window fallback it fits), then the `fallbacks` of that group, leaving
 * out groups the caller's model allow-list refuses.
 */
import type { RouterSettings } from '../config/config.ts';
import type { ModelGroup, ModelRegistry } from './model-registry.ts';
import { contextTooLong } from './routing-errors.ts';

export interface Plan {
  groups: ModelGroup[];
  /** The requested group when a context-window fallback replaced it before any attempt. */
  contextFallbackFrom: string | null;
}

export interface PlanContext {
  /** Pessimistic prompt size (serialized body length / 4); 0 skips the context-window check. */
  promptTokenEstimate: number;
  mayUseGroup?: (group: string) => boolean;
}

export function planGroups(
  registry: ModelRegistry,
  settings: Readonly<RouterSettings>,
  group: ModelGroup,
  context: PlanContext,
): Plan {
  let primary = group;
  let contextFallbackFrom: string | null = null;
  if (!fits(group, context.promptTokenEstimate)) {
    const replacement = usableGroups(registry, settings.context_window_fallbacks[group.name], context).find(
      (candidate) => fits(candidate, context.promptTokenEstimate),
    );
    if (!replacement) throw contextTooLong(group.name, context.promptTokenEstimate);
    contextFallbackFrom = group.name;
    primary = replacement;
  }
  return {
    groups: [primary, ...usableGroups(registry, settings.fallbacks[primary.name], context)],
    contextFallbackFrom,
  };
}

/** Whether a deployment of the group takes a prompt of this size. */
export function fitsDeployment(maxInputTokens: number | undefined, promptTokenEstimate: number): boolean {
  return maxInputTokens === undefined || maxInputTokens >= promptTokenEstimate;
}

function fits(group: ModelGroup, promptTokenEstimate: number): boolean {
  return group.deployments.some((deployment) =>
    fitsDeployment(deployment.maxInputTokens, promptTokenEstimate),
  );
}

function usableGroups(
  registry: ModelRegistry,
  names: readonly string[] | undefined,
  context: PlanContext,
): ModelGroup[] {
  const groups: ModelGroup[] = [];
  for (const name of names ?? []) {
    const candidate = registry.group(name);
    if (candidate && (context.mayUseGroup?.(name) ?? true)) groups.push(candidate);
  }
  return groups;
}
