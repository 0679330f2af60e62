/**
 * Group commit: items added while a write is in flight go together in the next write, so under load
 * one database transaction carries many records and each caller waits for one commit, not a queue of
 * them. Each `add` settles with the outcome of the write that carried its item.
 */
interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<T> {
  private readonly write: (items: T[]) => Promise<void>;
  private readonly maxBatch: number;
  private pending: Pending<T>[] = [];
  /** The batch being written now. */
  private inFlight: Pending<T>[] = [];
  private running: Promise<void> | undefined;

  private readonly lingerMs: number;

  /** Ends the current linger early (an urgent item arrived). */
  private hurry: (() => void) | undefined;

  /**
   * `lingerMs` > 0 waits that long before a write so that more items join it (fewer, larger
   * transactions under load), unless an urgent item arrives; 0 writes at the end of the current turn
   * of the event loop.
   */
  constructor(write: (items: T[]) => Promise<void>, options: { maxBatch?: number; lingerMs?: number } = {}) {
    this.write = write;
    this.maxBatch = options.maxBatch ?? 500;
    this.lingerMs = options.lingerMs ?? 0;
  }

  /** `urgent`: someone waits on this item (a stream's terminal marker), so it is not left to linger. */
  add(item: T, urgent = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.running ??= this.drain();
      if (urgent) this.hurry?.();
    });
  }

  /** Resolves when every item added so far has been written (or has failed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Items not known to be written: the batch in flight and those waiting. */
  get unsettledCount(): number {
    return this.inFlight.length + this.pending.length;
  }

  /**
   * Gives up at a deadline (shutdown): returns the items not known to be written (the batch in flight,
   * which may still commit, and those waiting, which will not be written) and settles their `add`s.
   */
  abandon(): T[] {
    const given = [...this.inFlight, ...this.pending.splice(0)];
    this.inFlight = [];
    for (const entry of given) entry.resolve();
    return given.map((entry) => entry.item);
  }

  private async drain(): Promise<void> {
    // Let the items of the current turn of the event loop (or of the linger time) join the batch.
    await this.linger();
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      this.inFlight = batch;
      try {
        await this.write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
      if (this.inFlight === batch) this.inFlight = [];
    }
    this.running = undefined;
  }

  private linger(): Promise<void> {
    if (this.lingerMs <= 0) return new Promise<void>((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.lingerMs);
      timer.unref();
      // An urgent item still waits for the end of this turn, so its neighbours join it.
      this.hurry = () => setImmediate(done);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    }).finally(() => {
      this.hurry = undefined;
    });
  }
}
