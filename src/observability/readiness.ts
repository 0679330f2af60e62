/**
 * Readiness: named probes run concurrently with a one-second deadline; one refresh at a time per
 * process and a one-second cache. A probe that fails, times out or is missing makes the gateway not
 * ready; draining (after SIGTERM) bypasses any cached success, and so does a failing `live` probe (an
 * in-memory check such as a required worker's: a dead or stale worker is reported at once).
 */
import type { Clock } from '../lib/clock.ts';

export interface ReadinessProbe {
  name: string;
  check(signal: AbortSignal): Promise<void>;
  /** Cheap and local (no I/O): run on every report too, so its failure bypasses a cached success. */
  live?: boolean;
}

export interface CheckDetail {
  state: 'ready' | 'failed' | 'timeout' | 'draining';
  latency_ms?: number;
  error?: string;
}

export interface ReadinessReport {
  status: 'ok' | 'degraded';
  checks: Record<string, boolean>;
  details: Record<string, CheckDetail>;
}

export interface ReadinessOptions {
  probes: readonly ReadinessProbe[];
  /** Check names that must be present (a missing probe is a failure, not a pass). */
  required: readonly string[];
  /**
   * Checks reported (`checks.x: false`, `details.x.state`) without gating `status`: a dependency the
   * gateway is configured to serve without (Redis under `fail_open`), so a load balancer following
   * readiness does not take every replica out while each would still answer.
   */
  informational?: readonly string[];
  clock: Clock;
  deadlineMs?: number;
  cacheMs?: number;
}

export class Readiness {
  private options: ReadinessOptions;
  private cached: { report: ReadinessReport; at: number } | undefined;
  private refreshing: Promise<ReadinessReport> | undefined;
  private draining = false;

  constructor(options: ReadinessOptions) {
    this.options = options;
  }

  /** A probe of a component started after the readiness object (the batch worker); `required` gates it. */
  addProbe(probe: ReadinessProbe, required: boolean): void {
    this.options = {
      ...this.options,
      probes: [...this.options.probes, probe],
      required: required ? [...this.options.required, probe.name] : this.options.required,
    };
  }

  startDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async report(): Promise<ReadinessReport> {
    const now = this.options.clock.now();
    if (
      !this.draining &&
      this.cached &&
      now - this.cached.at < (this.options.cacheMs ?? 1_000) &&
      !(this.cached.report.status === 'ok' && (await this.liveProbeFails()))
    )
      return this.cached.report;
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    const report = await this.refreshing;
    return this.draining ? drainingReport(report) : report;
  }

  private async liveProbeFails(): Promise<boolean> {
    const live = this.options.probes.filter((probe) => probe.live);
    const deadlineMs = this.options.deadlineMs ?? 1_000;
    const results = await Promise.all(live.map((probe) => runProbe(probe, deadlineMs)));
    return results.some((result) => result.state !== 'ready');
  }

  private async refresh(): Promise<ReadinessReport> {
    const deadlineMs = this.options.deadlineMs ?? 1_000;
    const results = await Promise.all(this.options.probes.map((probe) => runProbe(probe, deadlineMs)));
    const checks: Record<string, boolean> = {};
    const details: Record<string, CheckDetail> = {};
    this.options.probes.forEach((probe, index) => {
      const detail = results[index]!;
      checks[probe.name] = detail.state === 'ready';
      details[probe.name] = detail;
    });
    for (const name of this.options.required) {
      if (!(name in checks)) {
        checks[name] = false;
        details[name] = { state: 'failed', error: 'no probe is configured for this check' };
      }
    }
    const informational = new Set(this.options.informational ?? []);
    const status = Object.entries(checks).every(([name, ready]) => ready || informational.has(name))
      ? 'ok'
      : 'degraded';
    const report: ReadinessReport = { status, checks, details };
    this.cached = { report, at: this.options.clock.now() };
    return report;
  }
}

async function runProbe(probe: ReadinessProbe, deadlineMs: number): Promise<CheckDetail> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deadlineMs);
  });
  try {
    const outcome = await Promise.race([
      probe.check(controller.signal).then(() => 'ready' as const),
      deadline,
    ]);
    if (outcome === 'timeout') {
      controller.abort();
      return { state: 'timeout', error: `no answer within ${deadlineMs} ms` };
    }
    return { state: 'ready', latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    // Driver messages can embed connection strings (with credentials); keep the reason, drop URLs.
    const message = error instanceof Error ? error.message : String(error);
    return { state: 'failed', error: message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[url]') };
  } finally {
    clearTimeout(timer);
  }
}

function drainingReport(report: ReadinessReport): ReadinessReport {
  return {
    status: 'degraded',
    checks: { ...report.checks, draining: false },
    details: { ...report.details, draining: { state: 'draining', error: 'the process is shutting down' } },
  };
}
