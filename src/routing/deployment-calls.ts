/**
 * What a call to one deployment is made of: its chat capability (the registry refuses text groups whose
 * adapter lacks it) and the model name it sends upstream (a wildcard group's `*` filled in).
 */
import type { Capability, ChatCapability, ProviderAdapter } from '../providers/provider-adapter.ts';
import { LocalFailure } from '../providers/upstream-error.ts';
import type { Deployment } from './model-registry.ts';

/** The chat capability of a deployment (the registry refuses text groups whose adapter lacks it). */
export function chatOf(deployment: Deployment): ChatCapability {
  return capabilityOf(deployment, 'chat');
}

/** A capability of a deployment; its absence is our own failure (the registry checks modes at start). */
export function capabilityOf<K extends Capability>(
  deployment: Deployment,
  capability: K,
): NonNullable<ProviderAdapter[K]> {
  const served = deployment.adapter[capability];
  if (!served) throw new LocalFailure(new Error(`deployment ${deployment.id} serves no ${capability}`));
  return served as NonNullable<ProviderAdapter[K]>;
}

/**
 * The upstream sees its own model name; everything else the caller sent goes through unchanged. A
 * wildcard deployment (`model: openai/*` in group `openai/*`) sends the part of the requested name
 * that the group's `*` matched, never a literal `*`.
 */
export function withUpstreamModel<R extends { model: string }>(request: R, deployment: Deployment): R {
  return { ...request, model: upstreamModelOf(request.model, deployment) };
}

/** The model name a deployment sends upstream for a request of `requestedModel` (wildcards filled in). */
export function upstreamModelOf(requestedModel: string, deployment: Deployment): string {
  const upstream = deployment.config.params.model;
  if (!upstream.includes('*') || !deployment.modelName.endsWith('*')) return upstream;
  return upstream.replace('*', requestedModel.slice(deployment.modelName.length - 1));
}
