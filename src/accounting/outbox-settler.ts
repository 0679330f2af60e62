/**
 * The outbox settlement worker (outbox mode): moves accepted charges from spend_outbox into spend_logs
 * and spend_daily in batches, exactly once per request id (the repository's transaction and the
 * request-id key make a crash or a second replica harmless), and reports its heartbeat for readiness
 * and the backlog for metrics. Runs on every replica; rows survive restarts and `kill -9`.
 */
import { waitBounded } from '../lib/bounded-wait.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { SpendRepository } from '../store/db/repositories/spend-repository.ts';

export interface OutboxSettlerOptions {
  repository: SpendRepository;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  batchSize?: number;
  /** Pause between rounds when the outbox was empty. */
  idleMs?: number;
  /** Readiness fails when no round succeeded for this long. */
  staleAfterMs?: number;
}

export class OutboxSettler {
  private readonly options: Required<OutboxSettlerOptions>;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private current: Promise<void> | undefined;
  private lastSuccessAt: number | undefined;
  private lastError: unknown;

  constructor(options: OutboxSettlerOptions) {
    this.options = { batchSize: 500, idleMs: 250, staleAfterMs: 10_000, ...options };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** No more rounds; the round in flight is awaited until `deadlineAt` (epoch ms; its transaction is atomic). */
  async stop(deadlineAt = Date.now() + 5_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.current)
      await waitBounded('the outbox settlement round', this.current, deadlineAt, this.options.logger);
  }

  /** Settles until the outbox is empty (tests and shutdown); returns the rows moved. */
  async drain(): Promise<number> {
    let moved = 0;
    for (;;) {
      const batch = await this.options.repository.settleOutbox(this.options.batchSize);
      moved += batch;
      if (batch < this.options.batchSize) return moved;
    }
  }

  /** Throws (for readiness) when the worker has not completed a round recently. */
  checkFresh(): void {
    const { clock, staleAfterMs } = this.options;
    if (this.lastSuccessAt !== undefined && clock.now() - this.lastSuccessAt <= staleAfterMs) return;
    const reason = this.lastError instanceof Error ? `: ${this.lastError.message}` : '';
    throw new Error(`the outbox settlement worker has not completed a round in ${staleAfterMs} ms${reason}`);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.round().finally(() => {
        this.current = undefined;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    const { repository, metrics, clock, logger, batchSize, idleMs } = this.options;
    let delay = idleMs;
    try {
      const moved = await repository.settleOutbox(batchSize);
      if (moved > 0) metrics.accountingWrites.inc({ mode: 'outbox', outcome: 'settled' }, moved);
      const backlog = await repository.outboxBacklog();
      metrics.outboxPending.set(backlog.pending);
      metrics.outboxSettlementLag.set(
        backlog.oldest === null ? 0 : Math.max(0, clock.now() - backlog.oldest) / 1000,
      );
      this.lastSuccessAt = clock.now();
      this.lastError = undefined;
      if (moved === batchSize) delay = 0;
    } catch (error) {
      this.lastError = error;
      logger.warn({ err: error }, 'outbox settlement round failed; retrying');
      delay = Math.min(idleMs * 8, 5_000);
    }
    this.schedule(delay);
  }
}
