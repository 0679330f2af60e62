/**
 * Spend writers, one per `spend_ingestion_mode`. Legacy (legacy-spend-writer.ts): records go straight
 * to spend_logs in group commits; a failed batch is kept for retry, and the caller is never failed for
 * it. Outbox: a record is accepted when its outbox row is committed, within
 * `spend_finalization_timeout_ms`; otherwise `write` rejects and the answer fails (no terminal marker,
 * 503 for JSON), and the settlement worker moves accepted rows later.
 */
import type { SpendRecord } from '../canonical/spend-record.ts';
import { waitBounded } from '../lib/bounded-wait.ts';
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
  /**
   * Writes what is pending until `deadlineAt` (epoch ms; shutdown gives it the rest of the grace
   * period), then gives up: legacy spills what is still unwritten for the next start.
   */
  close(deadlineAt?: number): Promise<void>;
}

export interface SpendWriterOptions {
  repository: SpendRepository;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Legacy mode: the longest a stream's [DONE] waits for its record's write (default 5 s). */
  waitLimitMs?: number;
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

  async close(deadlineAt = Date.now() + 5_000): Promise<void> {
    const { logger, metrics } = this.options;
    const detail = () => ({ charges: this.commits.unsettledCount });
    if (await waitBounded('outbox commits', this.commits.idle(), deadlineAt, logger, { detail })) return;
    // Their answers already failed (spend_finalization_timeout_ms is shorter than any drain).
    const given = this.commits.abandon().length;
    metrics.accountingWrites.inc({ mode: 'outbox', outcome: 'abandoned' }, given);
    logger.warn({ charges: given }, 'outbox commits still pending at the shutdown deadline were abandoned');
  }
}
