/**
 * A Redis command bounded in time. The timeout is checked after the event loop has had a chance to
 * read pending replies, so a busy loop does not turn answered commands into false timeouts. Every
 * failure becomes a SharedStoreUnavailableError.
 */
import { SharedStoreUnavailableError } from './shared-store.ts';

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      // Timers run before the poll phase; give pending socket reads one turn before giving up.
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new SharedStoreUnavailableError(`no answer within ${timeoutMs} ms`));
      });
    }, timeoutMs);
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
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
