/**
 * The routing health report behind GET /health/deployments: per model group and deployment, whether it
 * is healthy or cooling down (until when), requests in flight, recent latency and failures, counts,
 * minute usage against its limits, and the routing topology. Never URLs or keys.
 */
import type { RouterSettings } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import type { CapacitySignal } from './capacity-signal.ts';
import type { DeploymentHealth } from './deployment-health.ts';
import type { ModelGroup, ModelRegistry } from './model-registry.ts';
import { utilization } from './strategies/rate-limit-aware.ts';

export interface ReportSources {
  registry: ModelRegistry;
  health: DeploymentHealth;
  settings: Readonly<RouterSettings>;
  clock: Clock;
  /** Whether per-deployment minute usage is counted (pre-call checks or a usage-aware strategy). */
  usageTracked: boolean;
  /** Current minute usage of these deployments, from the shared store. */
  readUsage(deploymentIds: readonly string[]): Promise<CapacitySignal>;
}

export async function deploymentReport(sources: ReportSources, model?: string) {
  const { registry, settings } = sources;
  const groups =
    model === undefined ? registry.groups() : registry.groups().filter((group) => group.name === model);
  const capacity = await sources.readUsage(
    groups.flatMap((group) => group.deployments.map((deployment) => deployment.id)),
  );
  const modelGroups = groups.map((group) => groupReport(group, sources, capacity));
  const deployments = modelGroups.flatMap((group) => group.deployments);
  return {
    counts: {
      model_groups: modelGroups.length,
      deployments: deployments.length,
      healthy: deployments.filter((deployment) => deployment.healthy).length,
      cooling_down: deployments.filter((deployment) => !deployment.healthy).length,
    },
    topology: {
      routing_strategy: settings.routing_strategy,
      num_retries: settings.num_retries,
      allowed_fails: settings.allowed_fails,
      cooldown_time: settings.cooldown_time,
      enable_pre_call_checks: settings.enable_pre_call_checks,
      usage_tracked: sources.usageTracked,
      fallbacks: settings.fallbacks,
      context_window_fallbacks: settings.context_window_fallbacks,
    },
    model_groups: modelGroups,
  };
}

function groupReport(group: ModelGroup, sources: ReportSources, capacity: CapacitySignal) {
  const { health, clock } = sources;
  const deployments = group.deployments.map((deployment) => {
    const state = health.state(deployment.id);
    const cooling = health.isCoolingDown(deployment.id);
    const usage = capacity.minuteUsage(deployment.id);
    return {
      id: deployment.id,
      provider: deployment.config.params.provider,
      healthy: !cooling,
      cooling_down_until: cooling ? new Date(state.cooldownUntil).toISOString() : null,
      in_flight: state.inFlight,
      latency_ms: round(state.latencyMs),
      time_to_first_token_ms: round(state.timeToFirstTokenMs),
      recent_failures: health.recentFailureCount(deployment.id),
      requests: state.requests,
      successes: state.successes,
      failures: state.failures,
      weight: deployment.weight,
      rpm_limit: deployment.rpmLimit ?? null,
      tpm_limit: deployment.tpmLimit ?? null,
      minute_usage: { requests: usage.requests, tokens: usage.tokens },
      utilization: Math.round(utilization(deployment, capacity) * 1000) / 1000,
      as_of: new Date(clock.now()).toISOString(),
    };
  });
  return {
    model: group.name,
    healthy_deployments: deployments.filter((deployment) => deployment.healthy).length,
    total_deployments: deployments.length,
    deployments,
  };
}

function round(value: number | undefined): number | null {
  return value === undefined ? null : Math.round(value * 10) / 10;
}
