/**
 * The chat-completions use case: resolve the model for the caller, admit the request (rate limits),
 * route it, and hand back either the answer or the encoded stream. Stream content is forwarded as it
 * arrives; the terminal `[DONE]` is written only after the stream finished cleanly. A request with MCP
 * tools is admitted once and runs all its model turns inside that admission. Records request, latency
 * and token metrics.
 */
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type { Usage } from '../canonical/usage.ts';
import { ErrorType, errors } from '../lib/error-catalogue.ts';
import { GatewayError, withHeaders } from '../lib/gateway-error.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';
import type { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Deployment, ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import type { Router, StartedStream } from '../routing/router.ts';
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { DONE_EVENT, encodeChatChunk, encodeChatStreamError } from '../wire/chat/encode-chat-stream.ts';
import type { McpToolLoop } from './mcp-tool-loop.ts';
import { RequestCharge } from './request-charge.ts';

export interface ChatContext {
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

export type ChatOutcome =
  | ({ kind: 'json'; json: string; response: ChatCompletion } & OutcomeMeta)
  | ({ kind: 'stream'; events: AsyncIterable<string> } & OutcomeMeta);

export interface ChatCompletionsOptions {
  registry: ModelRegistry;
  router: Router;
  admission: CallerAdmission;
  capacity: DeploymentCapacity;
  metrics: Metrics;
  /** Deadline of one proxied call until its answer (or, for a stream, its first chunk), across retries. */
  requestTimeoutMs: number;
  /** Runs requests whose tools include MCP servers (non-streaming only). */
  mcpTools?: McpToolLoop;
}

export class ChatCompletions {
  private readonly options: ChatCompletionsOptions;

  constructor(options: ChatCompletionsOptions) {
    this.options = options;
  }

  async run(request: ChatRequest, context: ChatContext): Promise<ChatOutcome> {
    const started = performance.now();
    const group = this.resolve(request.model, context.caller);
    const { mcpTools } = this.options;
    const charge = await this.admit(request, group, context, started);
    if (!mcpTools?.handles(request)) return this.call(request, group, context, charge, started, true);
    try {
      const outcome = await mcpTools.run(request, context, (turn, turnContext) =>
        this.call(turn, group, turnContext, charge, performance.now(), false),
      );
      return { ...outcome, headers: charge.ticket.headers };
    } catch (error) {
      throw withHeaders(error, charge.ticket.headers);
    } finally {
      charge.settle();
    }
  }

  private resolve(model: string, caller: Caller): ModelGroup {
    const group = this.options.registry.group(model);
    if (!group) throw errors.modelNotFound(model);
    if (!mayUseModel(caller, model)) throw errors.modelNotAllowed(model);
    if (group.mode !== 'chat') throw errors.wrongEndpointForModel(model, group.mode, '/v1/chat/completions');
    return group;
  }

  private async admit(
    request: ChatRequest,
    group: ModelGroup,
    context: ChatContext,
    started: number,
  ): Promise<RequestCharge> {
    const { admission, capacity } = this.options;
    const deploymentIds = capacity.enabled ? group.deployments.map((deployment) => deployment.id) : [];
    try {
      const ticket = await admission.admit({
        caller: context.caller,
        model: request.model,
        tokenEstimate: Math.ceil(context.bodyBytes / 4),
        requestId: context.requestId,
        reads: capacity.readKeys(deploymentIds),
      });
      return new RequestCharge(ticket, capacity, deploymentIds);
    } catch (error) {
      this.finish(request.model, statusOf(error), started);
      throw error;
    }
  }

  /** One provider call (with its retries and fallbacks) for an admitted request. */
  private async call(
    request: ChatRequest,
    group: ModelGroup,
    context: ChatContext,
    charge: RequestCharge,
    started: number,
    ownsCharge: boolean,
  ): Promise<ChatOutcome> {
    const { router, metrics } = this.options;
    const model = request.model;
    // The deadline covers routing and retries up to the answer, or up to a stream's first chunk; after
    // that, stream_timeout bounds each silence and the stream may run as long as it keeps sending.
    const deadline = Date.now() + this.options.requestTimeoutMs;
    const route = {
      signal: context.signal,
      requestId: context.requestId,
      promptTokenEstimate: Math.ceil(context.bodyBytes / 4),
      capacity: charge.capacity,
      deadline,
      // Fallbacks obey the key's model allow-list, and charge the per-model limits of the group they use.
      mayUseGroup: (name: string) => mayUseModel(context.caller, name),
      enterGroup: (name: string) => charge.ticket.admitModel(name),
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
        metrics.timeToFirstToken.observe({ model }, (performance.now() - started) / 1000);
        return {
          kind: 'stream',
          events: this.streamEvents(routed.value, includeUsage, model, routed.deployment, started, charge),
          deploymentId: routed.deployment.id,
          attempts: routed.attempts,
          headers: charge.ticket.headers,
        };
      }
      const routed = await router.complete(group, request, route);
      const { response, json } = routed.value;
      this.answered(model, routed.deployment, response.usage, charge);
      if (ownsCharge) charge.settle();
      this.finish(model, 200, started);
      return {
        kind: 'json',
        json: json ?? JSON.stringify(response),
        response,
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
        headers: charge.ticket.headers,
      };
    } catch (error) {
      if (ownsCharge) charge.settle();
      const failure =
        Date.now() >= deadline && !context.signal.aborted
          ? deadlineExceeded(model, this.options.requestTimeoutMs)
          : error;
      this.finish(model, statusOf(failure), started);
      throw withHeaders(failure, charge.ticket.headers);
    }
  }

  private async *streamEvents(
    started: StartedStream,
    includeUsage: boolean,
    model: string,
    deployment: Deployment,
    startedAt: number,
    charge: RequestCharge,
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
      charge.settle();
      this.finish(model, failure.status, startedAt);
      yield encodeChatStreamError(failure);
      return;
    } finally {
      if (!ended) {
        // The caller left mid-stream: stop the upstream call and free the slot.
        charge.settle();
        this.finish(model, 499, startedAt);
        await rest.return?.();
      }
    }
    this.answered(model, deployment, usage, charge);
    // Spec: the answer's accounting is awaited before the terminal marker (failures are only logged).
    await charge.settle();
    this.finish(model, 200, startedAt);
    yield DONE_EVENT;
  }

  private answered(
    model: string,
    deployment: Deployment,
    usage: Usage | undefined,
    charge: RequestCharge,
  ): void {
    if (usage) {
      this.options.metrics.tokens.inc({ model, direction: 'input' }, usage.prompt_tokens);
      this.options.metrics.tokens.inc({ model, direction: 'output' }, usage.completion_tokens);
    }
    charge.answered(deployment.id, usage);
  }

  private finish(model: string, status: number, startedAt: number): void {
    const { metrics } = this.options;
    metrics.requests.inc(model, String(status));
    metrics.requestDuration.observe({ model }, (performance.now() - startedAt) / 1000);
  }
}

function statusOf(error: unknown): number {
  return error instanceof GatewayError ? error.status : 500;
}

function deadlineExceeded(model: string, timeoutMs: number): GatewayError {
  return new GatewayError({
    status: 504,
    type: ErrorType.timeout,
    code: 'request_timeout',
    message: `Model '${model}' did not answer within the request deadline (${Math.round(timeoutMs / 1000)} s, general_settings.request_timeout_seconds).`,
  });
}
