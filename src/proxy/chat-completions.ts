/**
 * The chat-completions use case: resolve the model for the caller, route the request, and hand back
 * either the answer or the encoded stream. Stream content is forwarded as it arrives; the terminal
 * `[DONE]` is written only after the stream finished cleanly. Records request, latency and token
 * metrics, and each deployment's token use for capacity-aware routing.
 */
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type { Usage } from '../canonical/usage.ts';
import { errors } from '../lib/error-catalogue.ts';
import { GatewayError, withHeaders } from '../lib/gateway-error.ts';
import type { AdmissionTicket, CallerAdmission } from '../limits/caller-admission.ts';
import type { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Deployment, ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import type { Router, StartedStream } from '../routing/router.ts';
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { DONE_EVENT, encodeChatChunk, encodeChatStreamError } from '../wire/chat/encode-chat-stream.ts';

export interface ChatContext {
  caller: Caller;
  signal: AbortSignal;
  requestId: string;
  /** Size of the serialized request body, for the pessimistic token estimate (bytes / 4). */
  bodyBytes: number;
}

interface OutcomeMeta {
  deploymentId: string;
  attempts: number;
  /** Rate-limit headers of the admission (empty when no limit applies). */
  headers: Readonly<Record<string, string>>;
}

export type ChatOutcome =
  | ({ kind: 'json'; json: string; response: ChatCompletion } & OutcomeMeta)
  | ({ kind: 'stream'; events: AsyncIterable<string> } & OutcomeMeta);

export interface ChatCompletionsOptions {
  registry: ModelRegistry;
  router: Router;
  admission: CallerAdmission;
  capacity: DeploymentCapacity;
  metrics: Metrics;
  /** Overall deadline of one proxied request, across retries. */
  requestTimeoutMs: number;
}

export class ChatCompletions {
  private readonly options: ChatCompletionsOptions;

  constructor(options: ChatCompletionsOptions) {
    this.options = options;
  }

  async run(request: ChatRequest, context: ChatContext): Promise<ChatOutcome> {
    const { router, admission, capacity } = this.options;
    const started = performance.now();
    const model = request.model;
    const group = this.resolve(model, context.caller);
    const tokenEstimate = Math.ceil(context.bodyBytes / 4);
    const deploymentIds = capacity.enabled ? group.deployments.map((deployment) => deployment.id) : [];
    let ticket: AdmissionTicket;
    try {
      ticket = await admission.admit({
        caller: context.caller,
        model,
        tokenEstimate,
        requestId: context.requestId,
        reads: capacity.readKeys(deploymentIds),
      });
    } catch (error) {
      this.finish(model, statusOf(error), started);
      throw error;
    }
    const route = {
      signal: AbortSignal.any([context.signal, AbortSignal.timeout(this.options.requestTimeoutMs)]),
      requestId: context.requestId,
      promptTokenEstimate: tokenEstimate,
      capacity: capacity.snapshot(deploymentIds, ticket.reads),
    };
    try {
      if (request.stream === true) {
        const includeUsage = request.stream_options?.include_usage === true;
        // Usage is always requested upstream so the gateway can account; the caller sees it only if asked.
        const upstreamRequest: ChatRequest = {
          ...request,
          stream_options: { ...request.stream_options, include_usage: true },
        };
        const routed = await router.stream(group, upstreamRequest, route);
        this.options.metrics.timeToFirstToken.observe({ model }, (performance.now() - started) / 1000);
        return {
          kind: 'stream',
          events: this.streamEvents(routed.value, includeUsage, model, routed.deployment, started, ticket),
          deploymentId: routed.deployment.id,
          attempts: routed.attempts,
          headers: ticket.headers,
        };
      }
      const routed = await router.complete(group, request, route);
      const { response, json } = routed.value;
      this.account(model, routed.deployment, response.usage, ticket);
      this.finish(model, 200, started);
      return {
        kind: 'json',
        json: json ?? JSON.stringify(response),
        response,
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
        headers: ticket.headers,
      };
    } catch (error) {
      ticket.settle({});
      this.finish(model, statusOf(error), started);
      throw withHeaders(error, ticket.headers);
    }
  }

  private resolve(model: string, caller: Caller): ModelGroup {
    const group = this.options.registry.group(model);
    if (!group) throw errors.modelNotFound(model);
    if (!mayUseModel(caller, model)) throw errors.modelNotAllowed(model);
    return group;
  }

  private async *streamEvents(
    started: StartedStream,
    includeUsage: boolean,
    model: string,
    deployment: Deployment,
    startedAt: number,
    ticket: AdmissionTicket,
  ): AsyncGenerator<string> {
    const { first, rest } = started;
    let usage = first.usage;
    let ended = false;
    try {
      if (includeUsage || !first.usageOnly) yield encodeChatChunk(first);
      for (;;) {
        const next = await rest.next();
        if (next.done) break;
        const chunk = next.value;
        if (chunk.usage) usage = chunk.usage;
        if (chunk.usageOnly && !includeUsage) continue;
        yield encodeChatChunk(chunk);
      }
      ended = true;
    } catch (error) {
      // Content was already sent: no retry; one in-band error and no [DONE] marks the answer incomplete.
      ended = true;
      const failure = upstreamFailure(error, model);
      ticket.settle({});
      this.finish(model, failure.status, startedAt);
      yield encodeChatStreamError(failure);
      return;
    } finally {
      if (!ended) {
        // The caller left mid-stream: stop the upstream call and free the slot.
        ticket.settle({});
        this.finish(model, 499, startedAt);
        await rest.return?.();
      }
    }
    this.account(model, deployment, usage, ticket);
    this.finish(model, 200, startedAt);
    yield DONE_EVENT;
  }

  private account(
    model: string,
    deployment: Deployment,
    usage: Usage | undefined,
    ticket: AdmissionTicket,
  ): void {
    const { metrics, capacity } = this.options;
    if (usage) {
      metrics.tokens.inc({ model, direction: 'input' }, usage.prompt_tokens);
      metrics.tokens.inc({ model, direction: 'output' }, usage.completion_tokens);
    }
    ticket.settle({
      totalTokens: usage?.total_tokens,
      adjustments: capacity.settlement(deployment.id, usage?.total_tokens),
    });
  }

  private finish(model: string, status: number, startedAt: number): void {
    const { metrics } = this.options;
    metrics.requests.inc({ model, status });
    metrics.requestDuration.observe({ model }, (performance.now() - startedAt) / 1000);
  }
}

function statusOf(error: unknown): number {
  return error instanceof GatewayError ? error.status : 500;
}
