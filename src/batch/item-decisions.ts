/**
 * What the worker does with a failed item: a 429 (identity, deployment or output-token limits, or the
 * provider's own) delays it without spending an attempt, honouring retry-after; a 429 without
 * retry-after names no time it would pass (an exhausted lifetime budget) and fails the item, its 429 in
 * the error file, instead of delaying it until the window closes; a retryable failure
 * (5xx, timeouts) is retried with exponential backoff until the attempts run out; anything else fails
 * the item. Times are epoch milliseconds; the caller supplies `now`.
 */

export interface FailureFacts {
  status: number;
  /** Seconds, from the error's retry-after. */
  retryAfter?: number | undefined;
}

export type ItemDecision =
  | { kind: 'delay'; notBefore: number }
  | { kind: 'retry'; notBefore: number }
  | { kind: 'fail' };

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
};

const RETRYABLE = new Set([408, 409, 499, 500, 502, 503, 504]);

/** `attempts` counts the attempt that just failed. */
export function decideFailure(
  failure: FailureFacts,
  attempts: number,
  now: number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): ItemDecision {
  if (failure.status === 429) {
    if (failure.retryAfter === undefined) return { kind: 'fail' };
    const wait = failure.retryAfter * 1000;
    return { kind: 'delay', notBefore: now + Math.min(Math.max(wait, 100), policy.maxDelayMs) };
  }
  if (!RETRYABLE.has(failure.status) || attempts >= policy.maxAttempts) return { kind: 'fail' };
  const wait = Math.min(policy.baseDelayMs * 2 ** (attempts - 1), policy.maxDelayMs);
  return { kind: 'retry', notBefore: now + wait };
}
