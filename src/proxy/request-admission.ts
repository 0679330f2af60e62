/**
 * The steps every proxied request shares, whatever its endpoint: find the model group the caller may
 * use and check that the endpoint serves its mode, admit the request against the caller's limits and
 * budgets (with the cost it may reach reserved on them, and deployment usage read for routing), and
 * record the request's status and duration when it ends.
 */
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import { ErrorType, errors } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';
import type { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { Metrics } from '../observability/metrics.ts';
import { CAPABILITY_MODES, type Capability } from '../providers/provider-adapter.ts';
import type { ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import { RequestCharge, type SpendAccounting } from './request-charge.ts';

/** The public endpoint of each capability, for "call X instead" messages. */
const ENDPOINT_OF_CAPABILITY: Readonly<Record<Capability, string>> = {
  chat: '/v1/chat/completions',
  embeddings: '/v1/embeddings',
  images: '/v1/images/generations',
  speech: '/v1/audio/speech',
  transcription: '/v1/audio/transcriptions',
  rerank: '/v1/rerank',
};

/** The start-up line saying which endpoint serves which model groups (by model_info.mode). */
export function endpointsOfGroups(groups: readonly ModelGroup[]): string {
  const capabilities = Object.keys(CAPABILITY_MODES) as Capability[];
  const lines = capabilities.flatMap((capability) => {
    const names = groups
      .filter((group) => CAPABILITY_MODES[capability].includes(group.mode))
      .map((group) => group.name);
    const endpoint = `${ENDPOINT_OF_CAPABILITY[capability]}${capability === 'chat' ? ' (and the other text endpoints)' : ''}`;
    return names.length ? [`${endpoint}: ${names.join(', ')}`] : [];
  });
  const unserved = groups
    .filter((group) => !capabilities.some((capability) => CAPABILITY_MODES[capability].includes(group.mode)))
    .map((group) => `${group.name} (${group.mode})`);
  const served = `model groups by endpoint: ${lines.length ? lines.join('; ') : 'none'}`;
  return unserved.length ? `${served}; listed but served by no endpoint: ${unserved.join(', ')}` : served;
}

/** What the endpoint of a capability serves, in words. */
const SERVED: Readonly<Record<Capability, string>> = {
  chat: 'text-generation (chat, completion, responses)',
  embeddings: 'embedding',
  images: 'image_generation',
  speech: 'audio_speech',
  transcription: 'audio_transcription',
  rerank: 'rerank',
};

/**
 * The group serving `model` for `caller` on an endpoint of `capability`: 404 for an unknown model, 403
 * outside the caller's allow-list, 400 naming the right endpoint when the group's mode is another's.
 */
export function resolveGroup(
  registry: ModelRegistry,
  model: string,
  caller: Caller,
  endpoint: string,
  capability: Capability,
): ModelGroup {
  const group = registry.group(model);
  if (!group) throw errors.modelNotFound(model);
  if (!mayUseModel(caller, model)) throw errors.modelNotAllowed(model);
  if (!CAPABILITY_MODES[capability].includes(group.mode)) {
    const owner = (Object.keys(CAPABILITY_MODES) as Capability[]).find((name) =>
      CAPABILITY_MODES[name].includes(group.mode),
    );
    throw errors.wrongEndpointForModel(
      model,
      group.mode,
      endpoint,
      SERVED[capability],
      owner && ENDPOINT_OF_CAPABILITY[owner],
    );
  }
  return group;
}

export interface AdmissionParts {
  admission: CallerAdmission;
  capacity: DeploymentCapacity;
  metrics: Metrics;
  accounting?: SpendAccounting;
}

export interface AdmittedRequest {
  caller: Caller;
  model: string;
  endpoint: string;
  stream: boolean;
  requestId: string;
  /** Pessimistic token estimate for the rate limits (body bytes / 4; 1 for uploads). */
  tokenEstimate: number;
  /** performance.now() when the request started. */
  startedAt: number;
  /** A text request: output-token limits apply (embeddings, images, audio and rerank are excluded). */
  countsOutput?: boolean;
  /** A text request's max_tokens (or max_completion_tokens), when it sets one. */
  maxOutputTokens?: number | null | undefined;
}

/** Admits a request against its caller's limits; the charge settles it later. A refusal is recorded and thrown. */
export async function admitRequest(
  parts: AdmissionParts,
  group: ModelGroup,
  request: AdmittedRequest,
): Promise<RequestCharge> {
  const { admission, capacity, accounting } = parts;
  const deploymentIds = capacity.enabled ? group.deployments.map((deployment) => deployment.id) : [];
  try {
    const ticket = await admission.admit({
      caller: request.caller,
      model: request.model,
      tokenEstimate: request.tokenEstimate,
      requestId: request.requestId,
      reads: capacity.readKeys(deploymentIds),
      countsOutput: request.countsOutput === true,
      reservationUsd: reservationUsd(parts, group, request),
    });
    const spend = accounting && {
      accounting,
      request: {
        requestId: request.requestId,
        caller: request.caller,
        model: request.model,
        endpoint: request.endpoint,
        stream: request.stream,
        startedAt: request.startedAt,
      },
    };
    return new RequestCharge(ticket, capacity, deploymentIds, spend);
  } catch (error) {
    recordFinish(parts.metrics, request.model, statusOf(error), request.startedAt);
    throw error;
  }
}

/**
 * The most a request may cost, reserved against the caller's budgets at admission: the prompt estimate
 * at the input price plus max_tokens (for a text request without it, the configured default) at the
 * output price, on the priciest deployment of the group. Undefined when no budget of the caller has a
 * limit or no price is known (then nothing is reserved, as nothing would be charged).
 */
export function reservationUsd(
  parts: AdmissionParts,
  group: ModelGroup,
  request: AdmittedRequest,
): number | undefined {
  const { accounting, admission } = parts;
  if (!accounting || !request.caller.scopes.some((scope) => scope.budget?.maxMicros != null)) {
    return undefined;
  }
  const output = request.countsOutput ? (request.maxOutputTokens ?? admission.reservedOutputTokens) : 0;
  const usage = {
    prompt_tokens: request.tokenEstimate,
    completion_tokens: output,
    total_tokens: request.tokenEstimate + output,
  };
  let highest: number | undefined;
  for (const deployment of group.deployments) {
    const cost = accounting.costOf(deployment.id, usage, request.model);
    if (cost !== null && (highest === undefined || cost > highest)) highest = cost;
  }
  return highest;
}

/** Counts a finished request and its duration under its model. */
export function recordFinish(metrics: Metrics, model: string, status: number, startedAt: number): void {
  metrics.requests.inc(model, String(status));
  metrics.requestDuration.observe({ model }, (performance.now() - startedAt) / 1000);
}

export function statusOf(error: unknown): number {
  return error instanceof GatewayError ? error.status : 500;
}

export function deadlineExceeded(model: string, timeoutMs: number): GatewayError {
  return new GatewayError({
    status: 504,
    type: ErrorType.timeout,
    code: 'request_timeout',
    message: `Model '${model}' did not answer within the request deadline (${Math.round(timeoutMs / 1000)} s, general_settings.request_timeout_seconds).`,
  });
}
