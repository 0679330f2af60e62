/**
 * Enforces `general_settings.audit_retention_days`: deletes audit entries older than the retention,
 * once at start and then hourly, on an unref'd timer. Time comes from the injected clock.
 */
import type { Clock } from '../../lib/clock.ts';
import type { Database } from './create-database.ts';
import { AuditRepository } from './repositories/audit-repository.ts';

const DAY_MS = 86_400_000;
export const AUDIT_RETENTION_INTERVAL_MS = 3_600_000;

export interface AuditRetentionOptions {
  database: Pick<Database, 'db'>;
  clock: Clock;
  /** null keeps entries forever (no timer runs). */
  retentionDays: number | null;
  /** A sweep that failed (the next one retries). */
  onError: (error: unknown) => void;
}

export class AuditRetention {
  private readonly options: AuditRetentionOptions;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: AuditRetentionOptions) {
    this.options = options;
  }

  start(): void {
    if (this.options.retentionDays === null || this.timer) return;
    const run = () => {
      this.sweep().catch(this.options.onError);
    };
    this.timer = setInterval(run, AUDIT_RETENTION_INTERVAL_MS).unref();
    run();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Deletes what is older than the retention now; returns how many entries went. */
  async sweep(): Promise<number> {
    const { retentionDays, clock, database } = this.options;
    if (retentionDays === null) return 0;
    return new AuditRepository(database.db).deleteBefore(clock.now() - retentionDays * DAY_MS);
  }
}
