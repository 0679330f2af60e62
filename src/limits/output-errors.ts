/**
 * The answers of output-token admission (spec: Errors, Rate-limit error body): 429 naming the scope
 * whose recorded output reached its limit, 503 `output_tpm_usage_unknown` while a scope's usage is
 * unknown for the minute, 503 `output_tpm_unavailable` while the counters cannot be trusted or read.
 * Each retries at the next UTC minute; none cools a provider down (admission precedes routing).
 */
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import type { OutputRefusal } from '../store/shared/output-counters.ts';
import { scopeLabels } from './limit-checks.ts';
import { outputHeaders, type PlannedOutput, secondsToNextMinute } from './output-checks.ts';

/** The caller's error for an admission the store refused on an output counter. */
export function outputRefusalError(
  planned: readonly PlannedOutput[],
  refusal: OutputRefusal,
  now: number,
  headers: Readonly<Record<string, string>>,
): GatewayError {
  const retryAfter = secondsToNextMinute(now);
  if (refusal.state === 'unavailable') {
    return outputUnavailable(
      'The output-token counters were reset in the shared store (a flush, restore or failover); governed requests pause until the next UTC minute.',
      retryAfter,
      headers,
    );
  }
  const item = planned[refusal.index]!;
  if (refusal.state === 'unknown') {
    return new GatewayError({
      status: 503,
      type: ErrorType.unavailable,
      code: 'output_tpm_usage_unknown',
      param: item.name,
      message: `The output-token usage of the ${scopeLabels[item.scope]} (${item.name}) is unknown for this minute (an earlier call ended without a complete usage report). Retry after ${retryAfter} s, when the minute resets.`,
      retryAfter,
      headers: { ...headers, ...outputHeaders([item], [0], now, false) },
    });
  }
  return new GatewayError({
    status: 429,
    type: ErrorType.rateLimit,
    code: `${item.name}_exceeded`,
    param: item.name,
    message: `Output-token limit reached for the ${scopeLabels[item.scope]}: ${refusal.recorded} of ${item.check.limit} output tokens recorded this minute (${item.name}). Retry after ${retryAfter} s.`,
    retryAfter,
    headers: { ...headers, ...outputHeaders([item], [refusal.recorded], now, true) },
  });
}

/** 503 output_tpm_unavailable: the counters cannot be read or trusted. */
export function outputUnavailable(
  reason: string,
  retryAfter = 1,
  headers: Readonly<Record<string, string>> = {},
): GatewayError {
  return new GatewayError({
    status: 503,
    type: ErrorType.unavailable,
    code: 'output_tpm_unavailable',
    message: `Output-token limits cannot be checked: ${reason} Retry after ${retryAfter} s.`,
    retryAfter,
    headers,
  });
}
