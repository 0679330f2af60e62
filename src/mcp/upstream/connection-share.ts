/**
 * Each API key's share of one upstream MCP server's connections in this process (issue 25: one tenant
 * held all 32 pooled connections of a shared server and another tenant's call waited 14 s). A key has at
 * most `perKey` tool calls in flight to the server; further calls of the same key wait in a short queue
 * of the same length, for at most `waitMs`, and are refused beyond it. Other keys are never held up by
 * it: whatever one key does, at least `pool - perKey` connections stay open to the rest.
 */

/** Why a call did not get a connection: the key's queue was full, or its wait ran out. */
export class ConnectionShareExhausted extends Error {
  readonly perKey: number;

  constructor(perKey: number, reason: 'queue_full' | 'waited') {
    super(reason === 'queue_full' ? 'queue full' : 'waited too long');
    this.name = 'ConnectionShareExhausted';
    this.perKey = perKey;
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Holder {
  active: number;
  waiting: Waiter[];
}

export type ReleaseConnection = () => void;

export class ConnectionShare {
  private readonly perKey: number;
  private readonly waitMs: number;
  private readonly holders = new Map<string, Holder>();

  constructor(options: { perKey: number; waitMs: number }) {
    this.perKey = options.perKey;
    this.waitMs = options.waitMs;
  }

  /** Takes one of `holder`'s connections, waiting briefly in its queue when all are in use. */
  async acquire(holder: string, signal?: AbortSignal): Promise<ReleaseConnection> {
    signal?.throwIfAborted();
    let state = this.holders.get(holder);
    if (!state) {
      state = { active: 0, waiting: [] };
      this.holders.set(holder, state);
    }
    if (state.active < this.perKey) {
      state.active++;
      return this.releaser(holder, state);
    }
    if (state.waiting.length >= this.perKey) throw new ConnectionShareExhausted(this.perKey, 'queue_full');
    await this.wait(state, signal);
    return this.releaser(holder, state);
  }

  /** Calls in flight and waiting for `holder` (diagnostics and tests). */
  usage(holder: string): { active: number; waiting: number } {
    const state = this.holders.get(holder);
    return { active: state?.active ?? 0, waiting: state?.waiting.length ?? 0 };
  }

  /** Resolves when a release hands this waiter its slot; rejects on the deadline or the caller's abort. */
  private wait(state: Holder, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = (error: unknown) => {
        const index = state.waiting.indexOf(waiter);
        if (index >= 0) state.waiting.splice(index, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = () => leave(signal?.reason);
      const timer = setTimeout(() => leave(new ConnectionShareExhausted(this.perKey, 'waited')), this.waitMs);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: leave,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiting.push(waiter);
    });
  }

  /** A release that runs once: it hands the slot to the next waiter of the key, or frees it. */
  private releaser(holder: string, state: Holder): ReleaseConnection {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = state.waiting.shift();
      if (next) return next.resolve(); // the slot passes on: `active` stays
      state.active--;
      if (state.active === 0 && state.waiting.length === 0) this.holders.delete(holder);
    };
  }
}
