/**
 * The output-token accounting of one admitted request (spec output rules 4–6): each provider attempt
 * that produced output adds it once to every counter the request checked, in the store's current UTC
 * minute, with a receipt so a write retried after a lost reply is not counted twice; an attempt whose
 * output is unknown marks those counters unknown for the minute instead. Zero output writes nothing.
 * Writes run off the answer's path; `flush` waits for them (JSON answers show final accounting).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { type SharedStore, SharedStoreUnavailableError } from '../store/shared/shared-store.ts';
import { outputHeaders, type PlannedOutput } from './output-checks.ts';
import type { OutputEpochSeen } from './output-epoch.ts';

/** What one provider attempt produced: a count of output tokens, or unknown. */
export type AttemptOutput = number | 'unknown';

/** Tries of one recording with the same receipt: the first, and two after a lost or late reply. */
const WRITE_TRIES = 3;

export interface OutputRecorderOptions {
  store: SharedStore;
  planned: readonly PlannedOutput[];
  /** Recorded usage read at admission, and the store's time then. */
  admitted: { counts: readonly number[]; now: number };
  metrics: Metrics;
  logger: Logger;
  /** This process's memory of acknowledged writes, which each recording advances. */
  epoch?: OutputEpochSeen;
}

export class OutputRecorder {
  private readonly options: OutputRecorderOptions;
  private readonly keys: readonly string[];
  private counts: readonly number[];
  private now: number;
  /** Usage became unknown (a marker, or an accounting failure): remaining capacity is not shown. */
  private known = true;
  private readonly pending = new Set<Promise<void>>();

  constructor(options: OutputRecorderOptions) {
    this.options = options;
    this.keys = options.planned.map((item) => item.check.key);
    this.counts = options.admitted.counts;
    this.now = options.admitted.now;
  }

  /** One provider attempt ended; its output is written now, off the caller's path. */
  attempt(output: AttemptOutput): void {
    if (output !== 'unknown' && (!Number.isFinite(output) || output <= 0)) return;
    const write = output === 'unknown' ? this.markUnknown() : this.record(output);
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Resolves when every write started so far has finished (never rejects). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** The output headers: the admission snapshot, or the last recording's counters. */
  get headers(): Record<string, string> {
    return outputHeaders(this.options.planned, this.counts, this.now, this.known);
  }

  private async record(amount: number): Promise<void> {
    const { store, metrics } = this.options;
    const receipt = randomUUID();
    try {
      const recorded = await this.withRetries(() => store.recordOutput({ keys: this.keys, amount, receipt }));
      metrics.outputTpmEvents.inc({ event: 'accounted' });
      this.options.epoch?.observe(recorded.epoch);
      if (recorded.saturated) metrics.outputTpmEvents.inc({ event: 'saturated' });
      // Another request's unknown usage leaves this scope's remaining capacity unknown too (rule 6).
      if (recorded.unknown.some(Boolean)) this.known = false;
      // A later minute's counters are the final accounting; an earlier reply never replaces them.
      if (recorded.now >= this.now) {
        this.counts = recorded.counts;
        this.now = recorded.now;
      }
    } catch (error) {
      this.failed(error, 'recording output tokens');
    }
  }

  private async markUnknown(): Promise<void> {
    this.known = false;
    try {
      await this.withRetries(() => this.options.store.markOutputUnknown(this.keys));
      this.options.metrics.outputTpmEvents.inc({ event: 'unknown' });
    } catch (error) {
      this.failed(error, 'marking output usage unknown');
    }
  }

  /** Retries a write the store may or may not have applied (a timeout): the receipt makes it safe. */
  private async withRetries<T>(write: () => Promise<T>): Promise<T> {
    for (let tried = 1; ; tried++) {
      try {
        return await write();
      } catch (error) {
        if (tried >= WRITE_TRIES || !(error instanceof SharedStoreUnavailableError)) throw error;
      }
    }
  }

  /** Final accounting failure: the answer stands, remaining capacity is no longer shown (rule 6). */
  private failed(error: unknown, what: string): void {
    this.known = false;
    this.options.metrics.outputTpmEvents.inc({ event: 'accounting_failed' });
    this.options.logger.error(
      { err: error, scopes: this.options.planned.map((item) => item.name) },
      `output-token accounting failed while ${what}; the answer was kept`,
    );
  }
}
