/**
 * The one request pipeline behind every text endpoint (chat, completions, responses, messages): resolve
 * the model for the caller, admit the request (rate limits), route it, and hand back the canonical
 * answer or the canonical chunk stream, which `wire/<format>/` encodes for the caller. A stream's
 * iterator completes only after the answer's accounting settled, so an encoder writes its terminal
 * marker after it (spec proxy rule 5); a failure after content is thrown as a GatewayError for the
 * encoder's in-band error. A request with MCP tools is admitted once and runs all its model turns
 * inside that admission. Records request, latency and token metrics.
 */

import { answerTokens, estimatedUsage, maxTokensOf } from '../accounting/estimated-usage.ts';
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import { withHeaders } from '../lib/gateway-error.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';
import type { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { Metrics } from '../observability/metrics.ts';
import { aborted } from '../routing/attempt-outcomes.ts';
import { upstreamModelOf } from '../routing/deployment-calls.ts';
import type { ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import type { RouteContext, Router } from '../routing/router.ts';
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { answerFromCache } from './cached-answer.ts';
import type { McpToolLoop } from './mcp-tool-loop.ts';
import { admitRequest, deadlineExceeded, recordFinish, resolveGroup, statusOf } from './request-admission.ts';
import type { RequestCharge, SpendAccounting } from './request-charge.ts';
import type { CachePlan, ResponseCache } from './response-cache.ts';
import { routingOf, SpendNotRecorded, settleOrFail, settleQuietly } from './settlement.ts';
import { chargeAnswer, fallbackGroup, routeStream, type TextStreamParts } from './text-stream.ts';
import { UpstreamSignal, USAGE_DRAIN_MS } from './upstream-signal.ts';

export interface TextContext {
  caller: Caller;
  signal: AbortSignal;
  requestId: string;
  /** Size of the serialized request body, for the pessimistic token estimate (bytes / 4). */
  bodyBytes: number;
  /** The caller's request headers (MCP servers receive the ones their allowlist names). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
}

interface OutcomeMeta {
  deploymentId: string;
  attempts: number;
  /** Rate-limit headers of the admission (empty when no limit applies). */
  headers: Readonly<Record<string, string>>;
}

export type TextOutcome =
  | ({
      kind: 'json';
      response: ChatCompletion;
      /** The answer as chat-completions JSON, when at hand. */
      json?: string;
      /** The upstream's answer in the caller's native format, when the request went up natively. */
      native?: string;
    } & OutcomeMeta)
  /** Every chunk, usage-only ones included; completes after accounting, throws a GatewayError on failure. */
  | ({ kind: 'stream'; chunks: AsyncIterable<StreamChunk> } & OutcomeMeta);

/** The public endpoint a request came in on, for model-mode checks and messages. */
export interface TextEndpoint {
  path: string;
}

export interface TextPipelineOptions {
  registry: ModelRegistry;
  router: Router;
  admission: CallerAdmission;
  capacity: DeploymentCapacity;
  metrics: Metrics;
  /** Deadline of one proxied call until its answer (or, for a stream, its first chunk), across retries. */
  requestTimeoutMs: number;
  /** Runs requests whose tools include MCP servers (non-streaming only). */
  mcpTools?: McpToolLoop;
  /** Prices answers and records spend; absent, nothing is recorded (tests of other concerns). */
  accounting?: SpendAccounting;
  /** The response cache; absent, answers carry no x-switchboard-cache header (tests of other concerns). */
  cache?: ResponseCache;
}

export class TextPipeline {
  private readonly options: TextPipelineOptions;

  constructor(options: TextPipelineOptions) {
    this.options = options;
  }

  async run(request: ChatRequest, context: TextContext, endpoint: TextEndpoint): Promise<TextOutcome> {
    const started = performance.now();
    const group = resolveGroup(this.options.registry, request.model, context.caller, endpoint.path, 'chat');
    const { mcpTools, cache } = this.options;
    const usesMcp = mcpTools?.handles(request) === true;
    const plan = cache?.plan(request, context.caller, endpoint.path, context.headers, usesMcp);
    const charge = await this.admit(request, group, context, endpoint, started);
    if (cache && plan) {
      // The spec's order: admission (limits, budgets) first, then the cache; a hit calls no provider.
      const entry = await cache.get(plan);
      charge.cached(entry ? 'hit' : plan.status);
      if (entry) {
        return answerFromCache(entry, charge, {
          settleAnswer: () => this.settleAnswer(charge),
          finish: (status) => this.finish(request.model, status, started),
        });
      }
    }
    if (!usesMcp || !mcpTools) return this.call(request, group, context, charge, started, true, plan);
    return this.runToolLoop(mcpTools, request, group, context, charge);
  }

  /**
   * A request with MCP tools, all its model turns inside the one admission. Each turn's upstream call
   * outlives a caller who left by the drain time (UpstreamSignal), so its usage is still charged; no
   * turn starts after the caller left.
   */
  private async runToolLoop(
    mcpTools: McpToolLoop,
    request: ChatRequest,
    group: ModelGroup,
    context: TextContext,
    charge: RequestCharge,
  ): Promise<TextOutcome> {
    const upstream = new UpstreamSignal(context.signal, USAGE_DRAIN_MS);
    upstream.outliveCaller();
    let outcome: TextOutcome;
    try {
      outcome = await mcpTools.run(request, context, (turn, turnContext) =>
        this.toolLoopTurn(turn, group, turnContext, charge, upstream),
      );
    } catch (error) {
      settleQuietly(charge, upstream.callerLeft ? 499 : statusOf(error));
      throw withHeaders(error, charge.headers);
    } finally {
      upstream.end();
    }
    try {
      // Answered, though its caller may have left during the last turn (which the drain let finish).
      await this.settleAnswer(charge, upstream.callerLeft ? 499 : 200);
    } catch (error) {
      throw error instanceof SpendNotRecorded ? error.failure : error;
    }
    await charge.outputAccounted();
    return { ...outcome, headers: charge.headers };
  }

  /** One model turn of a tool loop; a turn the drain's end stopped after it went up is charged an estimate. */
  private async toolLoopTurn(
    turn: ChatRequest,
    group: ModelGroup,
    context: TextContext,
    charge: RequestCharge,
    upstream: UpstreamSignal,
  ): Promise<TextOutcome> {
    if (upstream.callerLeft) throw upstreamFailure(aborted(), turn.model);
    const openBefore = charge.attemptsWithUnknownOutput;
    try {
      return await this.call(
        turn,
        group,
        { ...context, signal: upstream.signal },
        charge,
        performance.now(),
        false,
      );
    } catch (error) {
      const [deploymentId] = routingOf(error);
      const deployment = deploymentId === null ? undefined : this.options.registry.deployment(deploymentId);
      if (upstream.callerLeft && charge.attemptsWithUnknownOutput > openBefore && deployment) {
        const usage = estimatedUsage({
          bodyBytes: context.bodyBytes,
          completionTokens: 0,
          maxTokens: maxTokensOf(turn),
        });
        charge.estimated(deployment.id, usage, upstreamModelOf(turn.model, deployment), 'caller_left');
      }
      throw error;
    }
  }

  private get streamParts(): TextStreamParts {
    const { router, metrics, cache } = this.options;
    return { router, metrics, cache, drainMs: USAGE_DRAIN_MS };
  }

  private admit(
    request: ChatRequest,
    group: ModelGroup,
    context: TextContext,
    endpoint: TextEndpoint,
    started: number,
  ): Promise<RequestCharge> {
    return admitRequest(this.options, group, {
      caller: context.caller,
      model: request.model,
      endpoint: endpoint.path,
      stream: request.stream === true,
      requestId: context.requestId,
      tokenEstimate: Math.ceil(context.bodyBytes / 4),
      startedAt: started,
      countsOutput: true,
      maxOutputTokens: request.max_completion_tokens ?? request.max_tokens,
    });
  }

  /** One provider call (with its retries and fallbacks) for an admitted request. */
  private async call(
    request: ChatRequest,
    group: ModelGroup,
    context: TextContext,
    charge: RequestCharge,
    started: number,
    ownsCharge: boolean,
    plan?: CachePlan,
  ): Promise<TextOutcome> {
    const { router } = this.options;
    const model = request.model;
    // The deadline covers routing and retries up to the answer, or up to a stream's first chunk; after
    // that, stream_timeout bounds each silence and the stream may run as long as it keeps sending.
    const deadline = Date.now() + this.options.requestTimeoutMs;
    const route: RouteContext = {
      signal: context.signal,
      requestId: context.requestId,
      promptTokenEstimate: Math.ceil(context.bodyBytes / 4),
      capacity: charge.capacity,
      deadline,
      // Fallbacks obey the key's model allow-list, and charge the per-model limits of the group they use.
      mayUseGroup: (name: string) => mayUseModel(context.caller, name),
      enterGroup: (name: string) => charge.ticket.admitModel(name),
      attemptFailed: (outputUnknown: boolean) => charge.attemptFailed(outputUnknown),
    };
    try {
      if (request.stream === true)
        return await routeStream(this.streamParts, { request, group, context, charge, started, plan }, route);
      const routed = await router.complete(group, request, route);
      const { response, json, native } = routed.value;
      charge.routed(routed.deployment.id, routed.modelGroup, routed.attempts);
      chargeAnswer(this.options.metrics, model, routed.deployment, response.usage, charge, () =>
        estimatedUsage({
          bodyBytes: context.bodyBytes,
          completionTokens: answerTokens(response),
          maxTokens: maxTokensOf(request),
        }),
      );
      if (ownsCharge) await this.settleAnswer(charge);
      // A JSON answer's output headers show the final accounting (spec output headers).
      if (ownsCharge) await charge.outputAccounted();
      const answer = {
        response,
        ...(json !== undefined ? { json } : {}),
        ...(native !== undefined ? { native } : {}),
      };
      if (plan) void this.options.cache?.put(plan, { kind: 'json', ...answer }, fallbackGroup(group, routed));
      this.finish(model, 200, started);
      return {
        kind: 'json',
        ...answer,
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
        headers: charge.headers,
      };
    } catch (error) {
      if (error instanceof SpendNotRecorded) {
        this.finish(model, statusOf(error.failure), started);
        throw error.failure;
      }
      const failure =
        Date.now() >= deadline && !context.signal.aborted
          ? deadlineExceeded(model, this.options.requestTimeoutMs)
          : error;
      if (ownsCharge) {
        charge.routed(...routingOf(failure));
        // Cancelled or timed out after the request went up: the provider may have produced tokens.
        const status = statusOf(failure);
        // Routing already reported each attempt's output (attemptFailed): none is still open.
        if (status === 499 || status === 504) charge.incomplete(false);
        settleQuietly(charge, statusOf(failure));
      }
      this.finish(model, statusOf(failure), started);
      throw withHeaders(failure, charge.headers);
    }
  }

  /**
   * Settles a JSON answer: in outbox mode the answer waits for its charge to be durably accepted (503
   * otherwise, spec rule 6); in legacy mode it does not wait for the write at all.
   */
  private async settleAnswer(charge: RequestCharge, status = 200): Promise<void> {
    if (this.options.accounting?.writer.mode === 'outbox') await settleOrFail(charge, status, charge.headers);
    else settleQuietly(charge, status);
  }

  private finish(model: string, status: number, startedAt: number): void {
    recordFinish(this.options.metrics, model, status, startedAt);
  }
}
