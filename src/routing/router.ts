/**
 * Runs a request against its model group: plans the groups to try (the requested one, a context-window
 * fallback chosen before any attempt, then `fallbacks`), picks deployments with the configured strategy
 * among the healthy ones, and retries retryable failures on a different deployment when it can. For
 * streams it pulls the first chunk inside the attempt, so every failure before the first byte can
 * still be retried and the caller gets a real error status when all attempts fail.
 */

import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { RouterSettings } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import type { Random } from '../lib/random.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { AttemptContext, CompletionResult } from '../providers/provider-adapter.ts';
import { classifyTransportError, LocalFailure, UpstreamError } from '../providers/upstream-error.ts';
import {
  aborted,
  mayHaveProducedOutput,
  outcomeOf,
  reasonOf,
  sleepUnlessAborted,
} from './attempt-outcomes.ts';
import type { CapacitySignal } from './capacity-signal.ts';
import { chatOf, withUpstreamModel } from './deployment-calls.ts';
import type { DeploymentHealth } from './deployment-health.ts';
import type { FallbackEventLog } from './fallback-events.ts';
import type { Deployment, ModelGroup, ModelRegistry } from './model-registry.ts';
import { fitsDeployment, planGroups } from './route-plan.ts';
import { failed, noCapacity, noHealthyDeployment } from './routing-errors.ts';
import type { RoutingStrategy } from './routing-strategy.ts';
import { utilization } from './strategies/rate-limit-aware.ts';
import { trackStream } from './tracked-stream.ts';
import { upstreamFailure } from './upstream-failure.ts';

export interface RouteContext {
  signal: AbortSignal;
  requestId: string;
  /** Pessimistic prompt size (serialized body length / 4), for context-window checks. */
  promptTokenEstimate: number;
  /** Deployment capacity use for this request (pre-call checks, usage-aware strategies). */
  capacity: CapacitySignal;
  /** Epoch ms (wall clock): no attempt starts after it, and attempts answer (or start streaming) by it. */
  deadline: number;
  /** The caller's model allow-list: fallbacks and context-window fallbacks skip groups it refuses. */
  mayUseGroup?: (group: string) => boolean;
  /**
   * Called before the first attempt in a group other than the requested one, to charge the caller's
   * per-model limits of that group; false (a limit is exhausted) skips the group.
   */
  enterGroup?: (group: string) => Promise<boolean>;
  /**
   * Called for each failed attempt: `outputUnknown` when the upstream may have produced output (the
   * request was sent and then timed out, broke, was cancelled or answered garbage); false when nothing
   * was generated (no connection, a pool timeout, an error status). Output-token accounting reads it.
   */
  attemptFailed?: (outputUnknown: boolean) => void;
}

export interface Routed<T> {
  value: T;
  deployment: Deployment;
  /** The model group that answered (differs from the requested model after a fallback). */
  modelGroup: string;
  attempts: number;
}

export interface StartedStream {
  first: StreamChunk;
  rest: AsyncIterator<StreamChunk>;
}

export interface RouterOptions {
  registry: ModelRegistry;
  settings: Readonly<RouterSettings>;
  strategy: RoutingStrategy;
  health: DeploymentHealth;
  events: FallbackEventLog;
  metrics: Metrics;
  clock: Clock;
  random: Random;
  /** Waits between attempts (injectable so tests need not sleep). */
  sleep?: (milliseconds: number, signal: AbortSignal) => Promise<void>;
}

/** Longest the router waits before retrying the same deployment when it asked for a pause. */
const MAX_RETRY_WAIT_MS = 10_000;

export class Router {
  private readonly options: RouterOptions;

  constructor(options: RouterOptions) {
    this.options = options;
  }

  complete(
    group: ModelGroup,
    request: ChatRequest,
    context: RouteContext,
  ): Promise<Routed<CompletionResult>> {
    return this.invoke(group, context, (deployment, attempt) =>
      chatOf(deployment).complete(withUpstreamModel(request, deployment), attempt),
    );
  }

  async stream(
    group: ModelGroup,
    request: ChatRequest,
    context: RouteContext,
  ): Promise<Routed<StartedStream>> {
    const routed = await this.openStream(group, context, async (deployment, attempt) => ({
      head: undefined,
      items: chatOf(deployment).stream(withUpstreamModel(request, deployment), attempt),
    }));
    return { ...routed, value: { first: routed.value.first, rest: routed.value.rest } };
  }

  /** One answer from a deployment of the group (any capability), with retries and fallbacks. */
  invoke<T>(
    group: ModelGroup,
    context: RouteContext,
    call: (deployment: Deployment, attempt: AttemptContext) => Promise<T>,
  ): Promise<Routed<T>> {
    const { health } = this.options;
    return this.execute(group, context, false, async (deployment, attempt) => {
      const started = performance.now();
      try {
        const result = await call(deployment, attempt);
        health.succeeded(deployment.id, { latencyMs: performance.now() - started });
        return result;
      } finally {
        health.finished(deployment.id);
      }
    });
  }

  /**
   * A streamed answer (any capability): `open` starts the upstream call and returns what the answer
   * says up front (`head`) and its items; the first item is pulled inside the attempt, so failures up
   * to it can still be retried. The deployment stays busy until the rest ends.
   */
  openStream<H, C>(
    group: ModelGroup,
    context: RouteContext,
    open: (deployment: Deployment, attempt: AttemptContext) => Promise<{ head: H; items: AsyncIterable<C> }>,
  ): Promise<Routed<{ head: H; first: C; rest: AsyncIterator<C> }>> {
    const { health } = this.options;
    return this.execute(group, context, true, async (deployment, attempt) => {
      const started = performance.now();
      let iterator: AsyncIterator<C> | undefined;
      let head: H;
      let first: IteratorResult<C>;
      try {
        const opened = await open(deployment, attempt);
        head = opened.head;
        iterator = opened.items[Symbol.asyncIterator]();
        first = await iterator.next();
        if (first.done)
          throw new UpstreamError({
            kind: 'protocol',
            retryable: true,
            message: 'the upstream stream had no chunks',
          });
      } catch (error) {
        health.finished(deployment.id);
        await iterator?.return?.().catch(() => {});
        throw error;
      }
      const timeToFirstTokenMs = performance.now() - started;
      const rest = trackStream(iterator, {
        onEnd: () => {
          health.finished(deployment.id);
          health.succeeded(deployment.id, { timeToFirstTokenMs, latencyMs: performance.now() - started });
        },
        onError: (error) => {
          health.finished(deployment.id);
          this.countFailure(deployment, error);
        },
        onAbandon: () => health.finished(deployment.id),
      });
      return { head, first: first.value, rest };
    });
  }

  private async execute<T>(
    requested: ModelGroup,
    context: RouteContext,
    streaming: boolean,
    run: (deployment: Deployment, attempt: AttemptContext) => Promise<T>,
  ): Promise<Routed<T>> {
    const { settings, health, metrics } = this.options;
    const { capacity } = context;
    const { groups, contextFallbackFrom } = planGroups(this.options.registry, settings, requested, context);
    const attemptsPerGroup = settings.num_retries + 1;
    const attemptContext: AttemptContext = {
      signal: context.signal,
      requestId: context.requestId,
      deadline: context.deadline,
    };
    let attempts = 0;
    let lastError: UpstreamError | undefined;
    let previous: Deployment | undefined;
    let shortestCooldownMs = Number.POSITIVE_INFINITY;
    let atCapacity = false;
    // Deployments that refused the request as the caller's mistake (a field their provider cannot take):
    // not their fault, not retried, and the request moves on to one that may take it.
    const refused = new Set<string>();
    let callerError: { error: GatewayError; deployment: Deployment } | undefined;

    for (let groupIndex = 0; groupIndex < groups.length; groupIndex++) {
      const group = groups[groupIndex]!;
      const entered = group === requested || (await (context.enterGroup?.(group.name) ?? true));
      const tried = new Set<string>();
      for (
        let inGroup = 0;
        entered && inGroup < attemptsPerGroup && Date.now() < context.deadline;
        inGroup++
      ) {
        const choice = this.choose(group, tried, refused, streaming, context);
        if (!choice.deployment) {
          shortestCooldownMs = Math.min(shortestCooldownMs, choice.cooldownMs);
          atCapacity ||= choice.atCapacity;
          break;
        }
        const deployment = choice.deployment;
        if (previous && lastError) {
          this.recordEvent(
            context,
            requested.name,
            group.name,
            previous.id,
            deployment.id,
            reasonOf(lastError),
            attempts,
          );
          await this.pause(lastError, previous, deployment, context.signal);
          // The caller left during the pause: no further attempt is made for it.
          if (context.signal.aborted)
            throw failed(upstreamFailure(aborted(), requested.name), attempts, previous);
        }
        attempts++;
        tried.add(deployment.id);
        health.started(deployment.id);
        capacity.attemptStarted(deployment.id);
        // Whether this attempt's request left: our own failure before it produced no output.
        let dispatched = false;
        const attempt: AttemptContext = {
          ...attemptContext,
          dispatched: () => {
            dispatched = true;
          },
        };
        try {
          const value = await run(deployment, attempt);
          metrics.upstreamAttempts.inc({ deployment: deployment.id, outcome: 'success' });
          if (groupIndex === 0) this.recordContextFallback(context, contextFallbackFrom, group, deployment);
          return { value, deployment, modelGroup: group.name, attempts };
        } catch (error) {
          // A caller mistake the adapter recognised before calling upstream (no voice, token arrays on
          // Cohere): not the deployment's fault and no retry spent; another deployment may take it.
          if (error instanceof GatewayError) {
            refused.add(deployment.id);
            callerError ??= { error, deployment };
            inGroup--;
            continue;
          }
          const upstream = this.countFailure(deployment, error);
          context.attemptFailed?.(mayHaveProducedOutput(upstream, dispatched));
          if (upstream instanceof LocalFailure)
            throw failed(upstreamFailure(upstream, requested.name), attempts, deployment);
          lastError = upstream;
          previous = deployment;
          if (upstream.kind === 'aborted' || context.signal.aborted || !upstream.retryable) {
            throw failed(upstreamFailure(upstream, requested.name), attempts, deployment);
          }
        }
      }
      if (groupIndex === 0) this.recordContextFallback(context, contextFallbackFrom, group, undefined);
    }
    if (lastError) {
      this.recordEvent(
        context,
        requested.name,
        null,
        previous?.id ?? null,
        null,
        `${reasonOf(lastError)}_exhausted`,
        attempts,
      );
      throw failed(upstreamFailure(lastError, requested.name), attempts, previous);
    }
    if (callerError) throw failed(callerError.error, attempts, callerError.deployment);
    throw atCapacity ? noCapacity(requested.name) : noHealthyDeployment(requested.name, shortestCooldownMs);
  }

  private choose(
    group: ModelGroup,
    tried: ReadonlySet<string>,
    refused: ReadonlySet<string>,
    streaming: boolean,
    context: RouteContext,
  ): { deployment?: Deployment; cooldownMs: number; atCapacity: boolean } {
    const { health, strategy, random, settings } = this.options;
    const { capacity } = context;
    let cooldownMs = Number.POSITIVE_INFINITY;
    let atCapacity = false;
    const healthy: Deployment[] = [];
    for (const deployment of group.deployments) {
      if (refused.has(deployment.id)) continue;
      if (!fitsDeployment(deployment.maxInputTokens, context.promptTokenEstimate)) continue;
      const remaining = health.cooldownRemainingMs(deployment.id);
      if (remaining > 0) {
        cooldownMs = Math.min(cooldownMs, remaining);
      } else if (settings.enable_pre_call_checks && utilization(deployment, capacity) >= 1) {
        atCapacity = true;
      } else {
        healthy.push(deployment);
      }
    }
    if (healthy.length === 0) return { cooldownMs, atCapacity };
    const untried = healthy.filter((deployment) => !tried.has(deployment.id));
    const candidates = untried.length > 0 ? untried : healthy;
    return {
      deployment: strategy.pick(candidates, { health, capacity, random, streaming }),
      cooldownMs,
      atCapacity,
    };
  }

  /** Waits `retry_after`, or the upstream's Retry-After when the retry goes to the same deployment. */
  private async pause(
    error: UpstreamError,
    previous: Deployment,
    next: Deployment,
    signal: AbortSignal,
  ): Promise<void> {
    let waitMs = this.options.settings.retry_after * 1000;
    if (next.id === previous.id && error.retryAfterMs !== undefined)
      waitMs = Math.max(waitMs, error.retryAfterMs);
    waitMs = Math.min(waitMs, MAX_RETRY_WAIT_MS);
    if (waitMs <= 0) return;
    await (this.options.sleep ?? sleepUnlessAborted)(waitMs, signal);
  }

  /**
   * Counts a failed attempt: an upstream failure goes into the deployment's health (and may cool it
   * down); a failure of our own code never does, and is never retried.
   */
  private countFailure(deployment: Deployment, error: unknown): UpstreamError | LocalFailure {
    const { health, metrics } = this.options;
    const classified = classifyTransportError(error);
    if (classified instanceof LocalFailure) {
      metrics.upstreamAttempts.inc({ deployment: deployment.id, outcome: 'local_error' });
      return classified;
    }
    metrics.upstreamAttempts.inc({ deployment: deployment.id, outcome: outcomeOf(classified) });
    if (health.failed(deployment.id, classified))
      metrics.deploymentCooldowns.inc({ deployment: deployment.id });
    return classified;
  }

  /**
   * The event of a context-window fallback chosen before any attempt (from_deployment null), recorded
   * when its group is done so that to_deployment names the deployment that served (null if none did).
   */
  private recordContextFallback(
    context: RouteContext,
    from: string | null,
    group: ModelGroup,
    served: Deployment | undefined,
  ): void {
    if (from === null) return;
    this.recordEvent(context, from, group.name, null, served?.id ?? null, 'context_window_exceeded', 0);
  }

  private recordEvent(
    context: RouteContext,
    model: string,
    toModel: string | null,
    from: string | null,
    to: string | null,
    reason: string,
    attempt: number,
  ): void {
    this.options.events.record({
      timestamp: new Date(this.options.clock.now()).toISOString(),
      request_id: context.requestId,
      model,
      to_model: toModel,
      from_deployment: from,
      to_deployment: to,
      reason,
      attempt,
    });
  }
}
