/**
 * A Redis command bounded in time. The timeout is checked after the event loop has had a chance to
 * read pending replies, so a busy loop does not turn answered commands into false timeouts. Every
 * failure becomes a SharedStoreUnavailableError; a timeout says whether the store stayed silent
 * (nothing came back on the connection during the wait: it hangs) or was only slow (other replies kept
 * arriving). With `patience`, a slow command is waited for up to that many timeouts in all, as long as
 * replies keep arriving: its answer is on its way. An answer that comes after the give-up goes to
 * `onLate`.
 */
import { SharedStoreUnavailableError } from './shared-store.ts';

export interface TimeoutOptions<T> {
  /** performance.now() of the last reply the connection delivered; without it a timeout is `silent`. */
  lastReplyAt?: () => number;
  /** Timeouts a slow command is waited for in all while other replies keep arriving (default 1). */
  patience?: number;
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
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let waitedFrom = performance.now();
    let rounds = 1;
    let timer: NodeJS.Timeout;
    const giveUp = (error: SharedStoreUnavailableError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abandon);
      reject(error);
    };
    const check = () => {
      if (settled) return;
      const silent = options.lastReplyAt === undefined || options.lastReplyAt() < waitedFrom;
      if (!silent && rounds < (options.patience ?? 1)) {
        rounds++;
        waitedFrom = performance.now();
        timer = setTimeout(() => setImmediate(check), timeoutMs);
        return;
      }
      const waited = `no answer within ${rounds * timeoutMs} ms`;
      giveUp(
        silent
          ? new SharedStoreUnavailableError(`${waited} (nothing came back meanwhile)`, 'silent')
          : new SharedStoreUnavailableError(waited, 'slow'),
      );
    };
    const abandon = () => giveUp(new SharedStoreUnavailableError('the caller stopped waiting', 'silent'));
    // Timers run before the poll phase; give pending socket reads one turn before checking.
    timer = setTimeout(() => setImmediate(check), timeoutMs);
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
