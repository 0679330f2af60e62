/**
 * The errors identity admission answers with: 429 for a rate limit or max_parallel_requests reached
 * (with the rate-limit headers and Retry-After), 503 while the shared store is unreachable under
 * fail_closed. Budget and output-token refusals have their own (budget-checks.ts, output-errors.ts).
 */
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import { type PlannedCheck, scopeLabels } from './limit-checks.ts';

const dimensionNames: Record<string, string> = {
  rpm: 'requests per minute',
  tpm: 'tokens per minute',
  rph: 'requests per hour',
  rpd: 'requests per day',
  tpd: 'tokens per day',
  model_rpm: 'requests per minute for this model',
  model_tpm: 'tokens per minute for this model',
};

export function parallelLimitError(
  inFlight: number,
  slotLimit: number | undefined,
  headers: Record<string, string>,
) {
  return new GatewayError({
    status: 429,
    type: ErrorType.rateLimit,
    code: 'key_max_parallel_requests_exceeded',
    param: 'key_max_parallel_requests',
    message: `The API key already has ${inFlight} of ${slotLimit} allowed requests in flight (key_max_parallel_requests). Wait for one to finish.`,
    retryAfter: 1,
    headers,
  });
}

export function rateLimitError(failed: PlannedCheck, retryAfter: number, headers: Record<string, string>) {
  return new GatewayError({
    status: 429,
    type: ErrorType.rateLimit,
    code: `${failed.name}_exceeded`,
    param: failed.name,
    message: `Rate limit reached for the ${scopeLabels[failed.scope]}: ${failed.check.limit} ${dimensionNames[failed.dimension]} (${failed.name}). Retry after ${retryAfter} s.`,
    retryAfter,
    headers,
  });
}

export function storeUnavailable(): GatewayError {
  return new GatewayError({
    status: 503,
    type: ErrorType.unavailable,
    code: 'shared_store_unavailable',
    message:
      'Rate limits cannot be checked because the shared store is unreachable (redis_degraded_mode: fail_closed). Retry shortly.',
    retryAfter: 1,
  });
}
