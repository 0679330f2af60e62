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
  private running: Promise<void> | undefined;

  constructor(write: (items: T[]) => Promise<void>, maxBatch = 500) {
    this.write = write;
    this.maxBatch = maxBatch;
  }

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves when every item added so far has been written (or has failed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Let the items of the current turn of the event loop join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.running = undefined;
  }
}
