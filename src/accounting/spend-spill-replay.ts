/**
 * Writes spilled spend (spend-spill.ts) into the telemetry database: at start, when a spill is added,
 * and again with a backoff (1 s doubling to 30 s) while the database refuses, until the folder holds
 * nothing of this database. Runs in the background: a start never waits for it.
 */
import type { SpendRecord } from '../canonical/spend-record.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { SpendRepository } from '../store/db/repositories/spend-repository.ts';
import type { SpendSpill } from './spend-spill.ts';

const BATCH = 500;
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

export interface SpillReplayOptions {
  spill: SpendSpill;
  repository: Pick<SpendRepository, 'record'>;
  logger: Logger;
  metrics: Metrics;
  mode: 'legacy' | 'outbox';
}

export class SpillReplay {
  private readonly options: SpillReplayOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private delayMs = FIRST_RETRY_MS;
  private stopped = false;

  constructor(options: SpillReplayOptions) {
    this.options = options;
  }

  /** Replays what is waiting, now (in the background). */
  nudge(): void {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.round().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once nothing is waiting, or the last try failed (tests and diagnostics). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** No more rounds; the round in flight (if any) is left to finish or be cut by the process exit. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async round(): Promise<void> {
    const { spill, logger } = this.options;
    for (;;) {
      let claim: ReturnType<SpendSpill['claim']>;
      try {
        claim = spill.claim();
      } catch (error) {
        logger.error({ err: error, folder: spill.dir }, 'cannot read the spend spill folder');
        return;
      }
      if (!claim) {
        this.delayMs = FIRST_RETRY_MS;
        return;
      }
      try {
        await this.write(claim.records);
      } catch (error) {
        claim.giveBack();
        logger.warn(
          { err: error, file: claim.file, retry_in_ms: this.delayMs },
          'spilled spend records not written yet; will retry',
        );
        this.retryLater();
        return;
      }
      claim.done();
      this.options.metrics.accountingWrites.inc(
        { mode: this.options.mode, outcome: 'replayed' },
        claim.records.length,
      );
      logger.info(
        { file: claim.file, records: claim.records.length, unreadable: claim.unreadable },
        'spilled spend records written to the telemetry database',
      );
      if (claim.unreadable > 0)
        logger.error({ file: claim.file, lines: claim.unreadable }, 'spend spill lines unreadable: lost');
    }
  }

  private async write(records: readonly SpendRecord[]): Promise<void> {
    for (let start = 0; start < records.length; start += BATCH)
      await this.options.repository.record(records.slice(start, start + BATCH));
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.nudge(), this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, LAST_RETRY_MS);
  }
}
