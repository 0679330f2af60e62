/**
 * Spend writers, one per `spend_ingestion_mode`. Legacy: records go straight to spend_logs in group
 * commits; a failed batch is logged, counted and kept for retry (never silently dropped while the
 * process lives), and the caller is never failed for it. Outbox: a record is accepted when its outbox
 * row is committed, within `spend_finalization_timeout_ms`; otherwise `write` rejects and the answer
 * fails (no terminal marker, 503 for JSON), and the settlement worker moves accepted rows later.
 */
import type { SpendRecord } from '../canonical/spend-record.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { SpendRepository } from '../store/db/repositories/spend-repository.ts';
import { GroupCommit } from './group-commit.ts';

export interface SpendWriter {
  readonly mode: 'legacy' | 'outbox';
  /**
   * Legacy: resolves once the record's batch was written or set aside (never rejects). Outbox:
   * resolves once durable. `waited`: the caller waits on it (a stream's terminal marker), so it is
   * written without lingering for a larger batch.
   */
  write(record: SpendRecord, waited?: boolean): Promise<void>;
  /** Writes what is pending (and, in legacy mode, tries the retained batches once more). */
  close(): Promise<void>;
}

export interface SpendWriterOptions {
  repository: SpendRepository;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Legacy mode: the longest a stream's [DONE] waits for its record's write (default 5 s). */
  waitLimitMs?: number;
}

/** Most records a legacy writer keeps for retry while the database is down (about 50 MB). */
const MAX_RETAINED = 100_000;
const RETRY_BATCH = 500;
/** How long a legacy batch waits for more records before it is written. */
const LEGACY_LINGER_MS = 25;

export class LegacySpendWriter implements SpendWriter {
  readonly mode = 'legacy' as const;
  private readonly options: SpendWriterOptions;
  private readonly commits: GroupCommit<SpendRecord>;
  private retained: SpendRecord[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 1_000;
  /** The retry in progress: one at a time, so two never write and remove the same records. */
  private retrying: Promise<void> | undefined;

  constructor(options: SpendWriterOptions) {
    this.options = options;
    // Only a stream's [DONE] waits on a legacy write (and skips the linger): larger batches otherwise.
    this.commits = new GroupCommit((records) => this.writeBatch(records), { lingerMs: LEGACY_LINGER_MS });
  }

  write(record: SpendRecord, waited = false): Promise<void> {
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

  async close(): Promise<void> {
    await this.commits.idle();
    clearTimeout(this.retryTimer);
    await this.retrying;
    if (this.retained.length > 0) await this.retry(false);
    if (this.retained.length > 0)
      this.options.logger.error(
        { records: this.retained.length },
        'spend records could not be written before shutdown',
      );
  }

  /** Retained records waiting for the database (tests and metrics). */
  get retainedCount(): number {
    return this.retained.length;
  }

  private async writeBatch(records: SpendRecord[]): Promise<void> {
    const { repository, metrics, logger } = this.options;
    try {
      await repository.record(records);
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'written' }, records.length);
    } catch (error) {
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'retained' }, records.length);
      logger.warn({ err: error, records: records.length }, 'spend batch not written; kept for retry');
      this.retain(records);
    }
  }

  private retain(records: SpendRecord[]): void {
    this.retained.push(...records);
    const excess = this.retained.length - MAX_RETAINED;
    if (excess > 0) {
      this.retained.splice(0, excess);
      this.options.metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'dropped' }, excess);
      this.options.logger.error(
        { records: excess },
        'spend records dropped: more than the retry buffer holds',
      );
    }
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
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
      // Remove exactly what was written: the overflow rule may have dropped the oldest meanwhile.
      const written = new Set(batch);
      this.retained = this.retained.filter((record) => !written.has(record));
      metrics.accountingWrites.inc({ mode: 'legacy', outcome: 'written_after_retry' }, batch.length);
    }
    this.retryDelayMs = 1_000;
  }
}

/** The charge could not be accepted durably (outbox mode): the answer must not claim success. */
export class SpendNotAcceptedError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`the charge was not accepted: ${reason}`, options);
    this.name = 'SpendNotAcceptedError';
  }
}

export class OutboxSpendWriter implements SpendWriter {
  readonly mode = 'outbox' as const;
  private readonly options: SpendWriterOptions;
  private readonly timeoutMs: number;
  private readonly commits: GroupCommit<SpendRecord>;

  constructor(options: SpendWriterOptions & { finalizationTimeoutMs: number }) {
    this.options = options;
    this.timeoutMs = options.finalizationTimeoutMs;
    this.commits = new GroupCommit((records) => options.repository.enqueue(records, options.clock.now()));
  }

  async write(record: SpendRecord): Promise<void> {
    const { metrics } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new SpendNotAcceptedError(`no commit within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      await Promise.race([this.commits.add(record), deadline]);
      metrics.accountingWrites.inc({ mode: 'outbox', outcome: 'accepted' });
    } catch (error) {
      const timedOut = error instanceof SpendNotAcceptedError;
      metrics.accountingWrites.inc({ mode: 'outbox', outcome: timedOut ? 'timeout' : 'failed' });
      this.options.logger.error(
        { err: error, request_id: record.requestId },
        'charge not accepted by the outbox',
      );
      throw timedOut ? error : new SpendNotAcceptedError('the telemetry database failed', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.commits.idle();
  }
}
