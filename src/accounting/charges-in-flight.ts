/**
 * Charges admitted but not yet settled. A shutdown flushes spend once HTTP has drained, but a stream it
 * cut (or whose socket it destroyed) settles only when the socket's close reaches the request, which
 * may come after the server's own close: the flush first waits, bounded, for those charges to hand
 * their record to the writer, so they are written or spilled with the rest instead of after it.
 */
export class ChargesInFlight {
  private count = 0;
  private readonly waiters = new Set<() => void>();

  get size(): number {
    return this.count;
  }

  /** Counts one charge; the returned release (idempotent) uncounts it once its record is handed over. */
  begin(): () => void {
    this.count++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count--;
      if (this.count === 0) for (const wake of [...this.waiters]) wake();
    };
  }

  /** Resolves true once no charge is in flight, or false at `deadlineAt` (epoch ms) with some still open. */
  settledBy(deadlineAt: number, now: () => number = Date.now): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (settled: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(settled);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, deadlineAt - now()));
      this.waiters.add(wake);
    });
  }
}
