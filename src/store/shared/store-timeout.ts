/**
 * A Redis command bounded in time. The timeout is checked after the event loop has had a chance to
 * read pending replies, so a busy loop does not turn answered commands into false timeouts. Every
 * failure becomes a SharedStoreUnavailableError; a timeout says whether the store stayed silent
 * (nothing came back on the connection since the command was sent: it hangs) or was only slow (other
 * replies kept arriving), and an answer that comes after the timeout goes to `onLate`.
 */
import { SharedStoreUnavailableError } from './shared-store.ts';

export interface TimeoutOptions<T> {
  /** performance.now() of the last reply the connection delivered; without it a timeout is `silent`. */
  lastReplyAt?: () => number;
  /** Receives the value of a command that answered after its timeout (to undo what it did). */
  onLate?: (value: T) => void;
  /** The caller stops waiting: fails at once like a silent timeout (the answer then goes to `onLate`). */
  signal?: AbortSignal | undefined;
}

export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  options: TimeoutOptions<T> = {},
): Promise<T> {
  const sentAt = performance.now();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      // Timers run before the poll phase; give pending socket reads one turn before giving up.
      setImmediate(() => {
        if (settled) return;
        settled = true;
        options.signal?.removeEventListener('abort', abandon);
        const silent = options.lastReplyAt === undefined || options.lastReplyAt() < sentAt;
        reject(
          new SharedStoreUnavailableError(
            `no answer within ${timeoutMs} ms${silent ? ' (nothing came back since it was sent)' : ''}`,
            silent ? 'silent' : 'slow',
          ),
        );
      });
    }, timeoutMs);
    const abandon = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new SharedStoreUnavailableError('the caller stopped waiting', 'silent'));
    };
    if (options.signal?.aborted) queueMicrotask(abandon);
    options.signal?.addEventListener('abort', abandon, { once: true });
    promise.then(
      (value) => {
        options.signal?.removeEventListener('abort', abandon);
        if (settled) {
          options.onLate?.(value);
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        options.signal?.removeEventListener('abort', abandon);
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(
          error instanceof SharedStoreUnavailableError
            ? error
            : new SharedStoreUnavailableError(String(error)),
        );
      },
    );
  });
}
