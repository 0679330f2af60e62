/**
 * The pipeline behind the non-text endpoints (embeddings, images, speech, transcription, rerank): the
 * same steps as the text pipeline — resolve the group for the caller and the endpoint's capability,
 * admit against the caller's limits, route with retries and fallbacks, charge the call's tokens and
 * billed units, settle — around each endpoint's capability call. Speech answers stream: the first
 * audio bytes are pulled inside the attempt (failures up to them can go elsewhere), and the audio
 * iterator completes only after the answer's accounting settled.
 */
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import type {
  Consumption,
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ImageResult,
  RerankRequest,
  RerankResult,
  SpeechRequest,
  SpeechResult,
  TranscriptionRequest,
  TranscriptionResult,
} from '../canonical/modalities.ts';
import { withHeaders } from '../lib/gateway-error.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';
import type { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { AttemptContext, Capability } from '../providers/provider-adapter.ts';
import { capabilityOf, upstreamModelOf, withUpstreamModel } from '../routing/deployment-calls.ts';
import type { Deployment, ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import type { RouteContext, Router } from '../routing/router.ts';
import { rewriteWavSizes } from '../wire/audio/wav-size-rewrite.ts';
import { admitRequest, deadlineExceeded, recordFinish, resolveGroup, statusOf } from './request-admission.ts';
import type { RequestCharge, SpendAccounting } from './request-charge.ts';
import { prepend, settledStream } from './settled-stream.ts';
import { routingOf, SpendNotRecorded, settleOrFail, settleQuietly } from './settlement.ts';

export interface ModalityContext {
  caller: Caller;
  signal: AbortSignal;
  requestId: string;
  /** Pessimistic token estimate for the rate limits: JSON body bytes / 4, or 1 for an upload (spec). */
  tokenEstimate: number;
}

export interface ModalityOutcome<T> {
  value: T;
  deploymentId: string;
  attempts: number;
  /** Rate-limit headers of the admission (empty when no limit applies). */
  headers: Readonly<Record<string, string>>;
}

/** A speech answer: the upstream's content type (and size, when announced) and its audio, streamed. */
export interface SpeechOutcome extends ModalityOutcome<Omit<SpeechResult, 'audio'>> {
  /** Completes after the answer's accounting settled; throws a GatewayError when the upstream broke off. */
  audio: AsyncIterable<Buffer>;
}

export interface ModalityPipelineOptions {
  registry: ModelRegistry;
  router: Router;
  admission: CallerAdmission;
  capacity: DeploymentCapacity;
  metrics: Metrics;
  /** Deadline of one proxied call until its answer (for speech, its first bytes), across retries. */
  requestTimeoutMs: number;
  /** Prices answers and records spend; absent, nothing is recorded (tests of other concerns). */
  accounting?: SpendAccounting;
}

interface Endpoint {
  path: string;
  capability: Capability;
  stream: boolean;
}

const EMBEDDINGS: Endpoint = { path: '/v1/embeddings', capability: 'embeddings', stream: false };
const IMAGES: Endpoint = { path: '/v1/images/generations', capability: 'images', stream: false };
const SPEECH: Endpoint = { path: '/v1/audio/speech', capability: 'speech', stream: true };
const TRANSCRIPTIONS: Endpoint = {
  path: '/v1/audio/transcriptions',
  capability: 'transcription',
  stream: false,
};
const RERANK: Endpoint = { path: '/v1/rerank', capability: 'rerank', stream: false };

export class ModalityPipeline {
  private readonly options: ModalityPipelineOptions;

  constructor(options: ModalityPipelineOptions) {
    this.options = options;
  }

  embed(request: EmbeddingRequest, context: ModalityContext): Promise<ModalityOutcome<EmbeddingResult>> {
    return this.run(EMBEDDINGS, request.model, context, (deployment, attempt) =>
      capabilityOf(deployment, 'embeddings').embed(withUpstreamModel(request, deployment), attempt),
    );
  }

  generateImages(request: ImageRequest, context: ModalityContext): Promise<ModalityOutcome<ImageResult>> {
    return this.run(IMAGES, request.model, context, (deployment, attempt) =>
      capabilityOf(deployment, 'images').generate(withUpstreamModel(request, deployment), attempt),
    );
  }

  transcribe(
    request: TranscriptionRequest,
    context: ModalityContext,
  ): Promise<ModalityOutcome<TranscriptionResult>> {
    return this.run(TRANSCRIPTIONS, request.model, context, (deployment, attempt) =>
      capabilityOf(deployment, 'transcription').transcribe(withUpstreamModel(request, deployment), attempt),
    );
  }

  rerank(request: RerankRequest, context: ModalityContext): Promise<ModalityOutcome<RerankResult>> {
    return this.run(RERANK, request.model, context, (deployment, attempt) =>
      capabilityOf(deployment, 'rerank').rerank(withUpstreamModel(request, deployment), attempt),
    );
  }

  async speak(request: SpeechRequest, context: ModalityContext): Promise<SpeechOutcome> {
    const started = performance.now();
    const { model } = request;
    const { group, charge } = await this.admit(SPEECH, model, context, started);
    const deadline = Date.now() + this.options.requestTimeoutMs;
    try {
      const routed = await this.options.router.openStream(
        group,
        this.routeContext(context, charge, deadline),
        async (deployment, attempt) => {
          const { audio, ...head } = await capabilityOf(deployment, 'speech').speak(
            withUpstreamModel(request, deployment),
            attempt,
          );
          return { head, items: audio };
        },
      );
      charge.routed(routed.deployment.id, routed.modelGroup, routed.attempts);
      charge.firstToken();
      const { head, first, rest } = routed.value;
      // Speech is billed by the characters sent, known now: a cut or abandoned stream keeps its charge.
      this.answered(model, routed.deployment, head, charge);
      const source = prepend(first, rest);
      // Spec rule 7: inside the settled stream, so a rewrite that cannot hold the audio fails the request.
      const audio = request.response_format === 'wav' ? rewriteWavSizes(source, head.contentLength) : source;
      return {
        value: head,
        audio: settledStream(audio, {
          model,
          charge,
          knownWhenCut: true,
          complete: () => {},
          finish: (status) => recordFinish(this.options.metrics, model, status, started),
        }),
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
        headers: charge.headers,
      };
    } catch (error) {
      throw this.failed(error, model, charge, context, deadline, started);
    }
  }

  private async run<T extends Consumption>(
    endpoint: Endpoint,
    model: string,
    context: ModalityContext,
    call: (deployment: Deployment, attempt: AttemptContext) => Promise<T>,
  ): Promise<ModalityOutcome<T>> {
    const started = performance.now();
    const { group, charge } = await this.admit(endpoint, model, context, started);
    const deadline = Date.now() + this.options.requestTimeoutMs;
    try {
      const routed = await this.options.router.invoke(
        group,
        this.routeContext(context, charge, deadline),
        call,
      );
      charge.routed(routed.deployment.id, routed.modelGroup, routed.attempts);
      this.answered(model, routed.deployment, routed.value, charge);
      if (this.options.accounting?.writer.mode === 'outbox') await settleOrFail(charge, 200, charge.headers);
      else settleQuietly(charge, 200);
      recordFinish(this.options.metrics, model, 200, started);
      return {
        value: routed.value,
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
        headers: charge.headers,
      };
    } catch (error) {
      if (error instanceof SpendNotRecorded) {
        recordFinish(this.options.metrics, model, statusOf(error.failure), started);
        throw error.failure;
      }
      throw this.failed(error, model, charge, context, deadline, started);
    }
  }

  private async admit(
    endpoint: Endpoint,
    model: string,
    context: ModalityContext,
    started: number,
  ): Promise<{ group: ModelGroup; charge: RequestCharge }> {
    const group = resolveGroup(
      this.options.registry,
      model,
      context.caller,
      endpoint.path,
      endpoint.capability,
    );
    const charge = await admitRequest(this.options, group, {
      caller: context.caller,
      model,
      endpoint: endpoint.path,
      stream: endpoint.stream,
      requestId: context.requestId,
      tokenEstimate: context.tokenEstimate,
      startedAt: started,
    });
    return { group, charge };
  }

  private routeContext(context: ModalityContext, charge: RequestCharge, deadline: number): RouteContext {
    return {
      signal: context.signal,
      requestId: context.requestId,
      // max_input_tokens bounds a chat prompt; here the body holds many inputs (or a file): no check.
      promptTokenEstimate: 0,
      capacity: charge.capacity,
      deadline,
      // Fallbacks obey the key's model allow-list, and charge the per-model limits of the group they use.
      mayUseGroup: (name: string) => mayUseModel(context.caller, name),
      enterGroup: (name: string) => charge.ticket.admitModel(name),
    };
  }

  /** Settles a request no provider answered (or whose answer failed) and returns the caller's error. */
  private failed(
    error: unknown,
    model: string,
    charge: RequestCharge,
    context: ModalityContext,
    deadline: number,
    started: number,
  ): unknown {
    const failure =
      Date.now() >= deadline && !context.signal.aborted
        ? deadlineExceeded(model, this.options.requestTimeoutMs)
        : error;
    charge.routed(...routingOf(failure));
    const status = statusOf(failure);
    // Cancelled or timed out after the request went up: the provider may have done (and billed) work.
    if (status === 499 || status === 504) charge.incomplete();
    settleQuietly(charge, status);
    recordFinish(this.options.metrics, model, status, started);
    return withHeaders(failure, charge.headers);
  }

  private answered(
    model: string,
    deployment: Deployment,
    consumption: Consumption,
    charge: RequestCharge,
  ): void {
    const { usage, units } = consumption;
    if (usage) this.options.metrics.tokens.inc({ model, direction: 'input' }, usage.prompt_tokens);
    if (usage?.completion_tokens)
      this.options.metrics.tokens.inc({ model, direction: 'output' }, usage.completion_tokens);
    charge.answered(deployment.id, usage, upstreamModelOf(model, deployment), units);
  }
}
