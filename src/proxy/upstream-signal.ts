/**
 * The abort signal of a request's upstream calls once leaving would cost the provider something the
 * caller must pay for (docs/limits.md, "Estimates for cut streams"). Until `outliveCaller()` the
 * caller's disconnect aborts it at once, as everywhere else. After it (a stream's first chunk went to
 * the caller; an MCP tool loop started) the upstream call outlives the caller by at most the drain
 * time, so the provider's usage report can still be read and charged; then it is aborted.
 */

/** How long an upstream call outlives a caller who left, for its usage report. */
export const USAGE_DRAIN_MS = 3_000;

/**
 * The caller's abort reason when a shutdown cut its stream (open-streams.ts): the process is leaving,
 * so its upstream call stops at once, without the drain, and is charged what was read (else the
 * estimate) while the spend can still be written.
 */
export class StreamCutByShutdown extends Error {
  constructor() {
    super('the stream was cut by the shutdown');
    this.name = 'StreamCutByShutdown';
  }
}

export class UpstreamSignal {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly caller: AbortSignal;
  private readonly drainMs: number;
  private outlives = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerLeft = (): void => {
    if (this.outlives && !this.cutByShutdown) this.startDrain();
    else this.controller.abort(this.caller.reason);
  };

  constructor(caller: AbortSignal, drainMs: number) {
    this.caller = caller;
    this.drainMs = drainMs;
    this.signal = this.controller.signal;
    if (caller.aborted) this.controller.abort(caller.reason);
    else caller.addEventListener('abort', this.onCallerLeft, { once: true });
  }

  /** Whether the caller is gone. */
  get callerLeft(): boolean {
    return this.caller.aborted;
  }

  /** Whether the caller is gone because a shutdown cut its stream (not because it left). */
  get cutByShutdown(): boolean {
    return this.caller.aborted && this.caller.reason instanceof StreamCutByShutdown;
  }

  /** From now on the caller's disconnect gives the upstream call the drain time instead of aborting it. */
  outliveCaller(): void {
    this.outlives = true;
    if (this.caller.aborted) this.onCallerLeft();
  }

  /**
   * Starts the drain's deadline if the caller's leave did not (a stream a shutdown cut); the call is
   * aborted when it passes. Never blocks: a timer that does not hold the process open.
   */
  startDrain(): void {
    if (this.timer !== undefined || this.signal.aborted) return;
    this.timer = setTimeout(() => this.controller.abort(this.caller.reason), this.drainMs);
    this.timer.unref?.();
  }

  /** The upstream call is over: drop the timer and the listener (nothing is left to abort). */
  end(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCallerLeft);
  }
}
