/**
 * The streamed answer of a text call: route it with an upstream signal that outlives a caller who left
 * once content went out, tap each chunk for usage, settle through settledStream (drain for the usage
 * report, else an estimate) and cache the completed stream under the model group that answered.
 */
import { estimatedUsage, maxTokensOf } from '../accounting/estimated-usage.ts';
import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { Usage } from '../canonical/usage.ts';
import type { Metrics } from '../observability/metrics.ts';
import { upstreamModelOf } from '../routing/deployment-calls.ts';
import type { Deployment, ModelGroup } from '../routing/model-registry.ts';
import type { RouteContext, Routed, Router, StartedStream } from '../routing/router.ts';
import { recordFinish } from './request-admission.ts';
import type { RequestCharge } from './request-charge.ts';
import type { CachePlan, ResponseCache } from './response-cache.ts';
import { prepend, settledStream } from './settled-stream.ts';
import type { TextContext, TextOutcome } from './text-pipeline.ts';
import { UpstreamSignal } from './upstream-signal.ts';

export interface TextStreamParts {
  router: Router;
  metrics: Metrics;
  cache: ResponseCache | undefined;
  drainMs: number;
}

/** What a streamed call needs past its routing. */
export interface StreamCall {
  request: ChatRequest;
  group: ModelGroup;
  context: TextContext;
  charge: RequestCharge;
  /** performance.now() when the call started. */
  started: number;
  plan: CachePlan | undefined;
}

/**
 * Routes a stream. Until its first chunk the caller's disconnect stops the upstream call; after it the
 * call outlives the caller for the drain time (UpstreamSignal), so leaving is still charged.
 */
export async function routeStream(
  parts: TextStreamParts,
  call: StreamCall,
  route: RouteContext,
): Promise<TextOutcome> {
  const { request, charge, started } = call;
  // Usage is always requested upstream so the gateway can account; encoders decide what callers see.
  const upstreamRequest: ChatRequest = {
    ...request,
    stream_options: { ...request.stream_options, include_usage: true },
  };
  const upstream = new UpstreamSignal(call.context.signal, parts.drainMs);
  let routed: Routed<StartedStream>;
  try {
    routed = await parts.router.stream(call.group, upstreamRequest, { ...route, signal: upstream.signal });
  } catch (error) {
    upstream.end();
    throw error;
  }
  upstream.outliveCaller();
  parts.metrics.timeToFirstToken.observe({ model: request.model }, (performance.now() - started) / 1000);
  charge.routed(routed.deployment.id, routed.modelGroup, routed.attempts);
  charge.firstToken();
  return {
    kind: 'stream',
    chunks: streamChunks(parts, routed, call, upstream),
    deploymentId: routed.deployment.id,
    attempts: routed.attempts,
    headers: charge.headers,
  };
}

async function* streamChunks(
  parts: TextStreamParts,
  routed: Routed<StartedStream>,
  call: StreamCall,
  upstream: UpstreamSignal,
): AsyncGenerator<StreamChunk> {
  const { request, charge, plan } = call;
  const { deployment, value: started } = routed;
  const model = request.model;
  const recorder = plan && parts.cache?.recorder(plan);
  let usage = started.first.usage;
  // Chunks read from the upstream: about one token each on the OpenAI wire (the estimate's completion).
  let chunksRead = 0;
  const estimate = () =>
    estimatedUsage({
      bodyBytes: call.context.bodyBytes,
      completionTokens: chunksRead,
      maxTokens: maxTokensOf(request),
    });
  yield* settledStream(prepend(started.first, started.rest), {
    model,
    charge,
    onItem: (chunk) => {
      if (chunk.usage) usage = chunk.usage;
      if (!chunk.usageOnly) chunksRead++;
      recorder?.add(chunk);
    },
    // Spec rule 5: the answer's accounting is settled before the encoder writes the terminal marker.
    complete: () => chargeAnswer(parts.metrics, model, deployment, usage, charge, estimate),
    finish: (status) => recordFinish(parts.metrics, model, status, call.started),
    drain: {
      upstream,
      chargeLeft: () => {
        if (usage) chargeAnswer(parts.metrics, model, deployment, usage, charge, estimate);
        else charge.estimated(deployment.id, estimate(), upstreamModelOf(model, deployment), 'caller_left');
      },
    },
  });
  const entry = recorder?.entry();
  if (plan && entry) void parts.cache?.put(plan, entry, fallbackGroup(call.group, routed));
}

/**
 * Charges a provider call's usage (as accounting checked it, `estimate` when unreadable) and counts
 * the tokens charged.
 */
export function chargeAnswer(
  metrics: Metrics,
  model: string,
  deployment: Deployment,
  usage: Usage | undefined,
  charge: RequestCharge,
  estimate: () => Usage,
): void {
  const upstreamModel = upstreamModelOf(model, deployment);
  const charged = charge.answered(deployment.id, usage, upstreamModel, undefined, estimate);
  if (charged) {
    metrics.tokens.inc({ model, direction: 'input' }, charged.prompt_tokens);
    metrics.tokens.inc({ model, direction: 'output' }, charged.completion_tokens);
  }
}

/** The group that answered when it is a fallback of the requested one (its answer is cached under it). */
export function fallbackGroup(requested: ModelGroup, routed: Routed<unknown>): string | undefined {
  return routed.modelGroup === requested.name ? undefined : routed.modelGroup;
}
