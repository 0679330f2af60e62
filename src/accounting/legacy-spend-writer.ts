/**
 * The legacy spend writer: records go straight to spend_logs in group commits; a failed batch is
 * logged, counted and kept in memory for retry, and the caller is never failed for it. What does not
 * fit the memory buffer, and what is still unwritten when shutdown's deadline comes, goes to the spill
 * folder (spend-spill.ts) for the next start or for this process once the database answers again;
 * only a spill that cannot be written loses records, counted and logged with their number.
 */
import type { SpendRecord } from '../canonical/spend-record.ts';
import { waitBounded } from '../lib/bounded-wait.ts';
import { GroupCommit } from './group-commit.ts';
import type { SpendSpill } from './spend-spill.ts';
import type { SpendWriter, SpendWriterOptions } from './spend-writer.ts';

/** Most records kept in memory for retry while the database is down (about 50 MB). */
const MAX_RETAINED = 100_000;
const RETRY_BATCH = 500;
/** How long a legacy batch waits for more records before it is written. */
const LEGACY_LINGER_MS = 25;

export interface LegacySpendWriterOptions extends SpendWriterOptions {
  /** Where records go that memory or the shutdown deadline cannot keep; without it they are dropped. */
  spill?: SpendSpill;
  /** Called after records were spilled while running (the replay takes them once the database is back). */
  onSpilled?: () => void;
  /** Most records kept in memory for retry (default 100,000, about 50 MB). */
  maxRetained?: number;
}

export class LegacySpendWriter implements SpendWriter {
  readonly mode = 'legacy' as const;
  private readonly options: LegacySpendWriterOptions;
  private readonly commits: GroupCommit<SpendRecord>;
  private retained: SpendRecord[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 1_000;
  /** The retry in progress: one at a time, so two never write and remove the same records. */
  private retrying: Promise<void> | undefined;
  /** Shutdown spilled what was unwritten: a batch failing after it is not kept again. */
  private closed = false;

  constructor(options: LegacySpendWriterOptions) {
    this.options = options;
    // Only a stream's [DONE] waits on a legacy write (and skips the linger): larger batches otherwise.
    this.commits = new GroupCommit((records) => this.writeBatch(records), { lingerMs: LEGACY_LINGER_MS });
  }

  write(record: SpendRecord, waited = false): Promise<void> {
    // A request that settles after the shutdown's flush (its socket closed late): spilled for the next
    // start like the rest, never handed to a database that is closing.
    if (this.closed) {
      this.spill([record], 'shutdown');
      return Promise.resolve();
    }
    const written = this.commits.add(record, waited).catch(() => {}); // writeBatch never throws
    if (!waited) return written;
    // A database that hangs must not hold back a stream's [DONE] (legacy mode shrugs off the database):
    // the wait is bounded; the batch goes on (and is retried) in the background.
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.waitLimitMs ?? 5_000);
    });
    return Promise.race([written, bounded]).finally(() => clearTimeout(timer));
  }

  async close(deadlineAt = Date.now() + 5_000): Promise<void> {
    clearTimeout(this.retryTimer);
    const detail = () => ({ records: this.unwrittenCount });
    await waitBounded('the spend flush', this.flush(), deadlineAt, this.options.logger, { detail });
    this.closed = true;
    const unwritten = [...this.commits.abandon(), ...this.retained.splice(0)];
    if (unwritten.length > 0) this.spill(unwritten, 'shutdown');
  }

  /** Records not known to be written: waiting, in flight, or retained for retry. */
  get unwrittenCount(): number {
    return this.commits.unsettledCount + this.retained.length;
  }

  /** Retained records waiting for the database (tests and metrics). */
  get retainedCount(): number {
    return this.retained.length;
  }

  private async flush(): Promise<void> {
    await this.commits.idle();
    await this.retrying;
    if (this.retained.length > 0) await this.retry(false);
  }

  private async writeBatch(records: SpendRecord[]): Promise<void> {
    const { repository, metrics, logger } = this.options;
    try {
      await repository.record(records);
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'written' }, records.length);
    } catch (error) {
      if (this.closed) return; // spilled at the deadline already
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'retained' }, records.length);
      logger.warn({ err: error, records: records.length }, 'spend batch not written; kept for retry');
      this.retain(records);
    }
  }

  private retain(records: SpendRecord[]): void {
    this.retained.push(...records);
    const excess = this.retained.length - (this.options.maxRetained ?? MAX_RETAINED);
    if (excess > 0) {
      this.spill(this.retained.splice(0, excess), 'memory');
      this.options.onSpilled?.();
    }
    this.scheduleRetry();
  }

  /** Writes records to the spill folder, or counts and logs them as lost when that fails too. */
  private spill(records: SpendRecord[], why: 'shutdown' | 'memory'): void {
    const { spill, metrics, logger } = this.options;
    const reason =
      why === 'shutdown'
        ? 'not written by the shutdown deadline'
        : 'more than the in-memory retry buffer holds';
    try {
      if (!spill) throw new Error('no spill folder is configured');
      const file = spill.write(records);
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'spilled' }, records.length);
      logger.warn(
        { records: records.length, file },
        `spend records ${reason}: spilled to a local file; they are written when the database answers (next start at the latest)`,
      );
    } catch (error) {
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'dropped' }, records.length);
      logger.error(
        { err: error, records: records.length, folder: spill?.dir },
        `${records.length} spend records lost: ${reason}, and the spill folder could not take them`,
      );
    }
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.retrying) void this.retry(true);
    }, this.retryDelayMs);
    this.retryTimer.unref();
  }

  private retry(again: boolean): Promise<void> {
    this.retrying = this.retryNow(again).finally(() => {
      this.retrying = undefined;
    });
    return this.retrying;
  }

  private async retryNow(again: boolean): Promise<void> {
    const { repository, metrics } = this.options;
    while (this.retained.length > 0) {
      const batch = this.retained.slice(0, RETRY_BATCH);
      try {
        await repository.record(batch);
      } catch {
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, 30_000);
        if (again) this.scheduleRetry();
        return;
      }
      // Remove exactly what was written: the overflow rule may have moved the oldest meanwhile.
      const written = new Set(batch);
      this.retained = this.retained.filter((record) => !written.has(record));
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'written_after_retry' }, batch.length);
    }
    this.retryDelayMs = 1_000;
  }
}
