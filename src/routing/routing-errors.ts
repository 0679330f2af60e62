/** The GatewayErrors routing produces itself (the upstream's own failures map in upstream-failure.ts). */
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError, withHeaders } from '../lib/gateway-error.ts';
import type { Deployment } from './model-registry.ts';

export function contextTooLong(model: string, estimate: number): GatewayError {
  return new GatewayError({
    status: 400,
    type: ErrorType.invalidRequest,
    code: 'context_length_exceeded',
    param: 'messages',
    message: `The request (about ${estimate} tokens) is longer than model '${model}' accepts, and no context_window_fallbacks model fits it. Shorten the messages.`,
  });
}

export function noCapacity(model: string): GatewayError {
  return new GatewayError({
    status: 503,
    type: ErrorType.unavailable,
    code: 'no_deployment_capacity',
    message: `Every deployment of model '${model}' is at its per-minute capacity (rpm_limit / tpm_limit). Retry in a minute.`,
    retryAfter: 60,
  });
}

export function noHealthyDeployment(model: string, cooldownMs: number): GatewayError {
  const retryAfter = Number.isFinite(cooldownMs) ? Math.max(1, Math.ceil(cooldownMs / 1000)) : 1;
  return new GatewayError({
    status: 503,
    type: ErrorType.unavailable,
    code: 'no_healthy_deployment',
    message: `Every deployment of model '${model}' is cooling down after failures. Retry after ${retryAfter} s.`,
    retryAfter,
  });
}

/** A routing failure says how many attempts were made and which deployment answered last. */
export function failed(error: GatewayError, attempts: number, last: Deployment | undefined): unknown {
  return withHeaders(error, {
    'x-switchboard-attempts': String(attempts),
    ...(last ? { 'x-switchboard-deployment': last.id } : {}),
  });
}
