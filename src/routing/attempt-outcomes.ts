/**
 * Small facts about a failed attempt: its metric outcome, its fallback-event reason, whether it may
 * have produced output, and the pause before the next one.
 */
import { LocalFailure, UpstreamError } from '../providers/upstream-error.ts';

export function sleepUnlessAborted(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, milliseconds);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * Whether a failed attempt may have produced output: not when nothing was sent (connect failure, pool
 * timeout: known zero) or the upstream answered an error status; otherwise its usage is unknown. A
 * failure of our own code is known zero before the request was `dispatched` (building or signing it,
 * spec output rule 5) and unknown after (reading the answer).
 */
export function mayHaveProducedOutput(error: UpstreamError | LocalFailure, dispatched: boolean): boolean {
  if (error instanceof LocalFailure) return dispatched;
  return error.kind !== 'connect' && error.kind !== 'pool_timeout' && error.kind !== 'status';
}

export function outcomeOf(error: UpstreamError): string {
  if (error.kind !== 'status') return error.kind;
  return error.status === 429 ? 'status_429' : `status_${Math.floor((error.status ?? 500) / 100)}xx`;
}

export function reasonOf(error: UpstreamError): string {
  return error.kind === 'status' ? `status_${error.status}` : error.kind;
}

/** The failure of a request whose caller left before its next attempt. */
export function aborted(): UpstreamError {
  return new UpstreamError({ kind: 'aborted', retryable: false, message: 'the caller went away' });
}
