/**
 * Every fault scenario records what it measured here; the suite's teardown renders the records as the
 * table of docs/reliability.md (see render-fault-report.ts). One JSON file per scenario, so scenarios in
 * different files and processes never race on one file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ScenarioResult {
  /** The group in the table, e.g. `Redis`, `PostgreSQL`, `Upstream`, `Replicas`. */
  group: string;
  /** What was done, e.g. `redis-server killed for 3 s under load, then restarted`. */
  scenario: string;
  /** How the gateway is configured to degrade, e.g. `fail_closed`, `fail_open`, `outbox`. */
  mode: string;
  /** Requests sent during the scenario (including those before and after the fault). */
  requests: number;
  /** Requests answered 2xx (a stream counts when it ended with its terminal marker). */
  served: number;
  /** Everything not served, by HTTP status; `cut` for a stream cut after its head. */
  errorsByStatus: Record<string, number>;
  /** Seconds from the fault's end until requests were served again, or null when service never stopped. */
  recoverySeconds: number | null;
  /** Seconds until /health/readiness reflected the fault, or null when readiness is not affected. */
  readinessSeconds: number | null;
  /** `exact` when outbox/spend rows equal the served requests after recovery; otherwise what was found. */
  spend: string;
  /** Anything else worth a reader's attention, one short sentence. */
  notes?: string;
}

/** Where records go: FAULT_REPORT_DIR, or `.fault-report/` in the working directory (git-ignored). */
export function faultReportDir(): string {
  return process.env.FAULT_REPORT_DIR ?? join(process.cwd(), '.fault-report');
}

export function recordScenario(result: ScenarioResult): void {
  const dir = faultReportDir();
  mkdirSync(dir, { recursive: true });
  const slug = `${result.group}-${result.mode}-${result.scenario}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 80);
  writeFileSync(join(dir, `${slug}.json`), `${JSON.stringify(result, null, 2)}\n`);
}
