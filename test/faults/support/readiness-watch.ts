/**
 * Readiness as an orchestrator sees it during a fault: open-loop probes of one gateway's
 * `/health/readiness`, every sample kept, so a scenario can date the flip after its fault and back.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface ReadinessSample {
  /** performance.now() when the probe was sent. */
  at: number;
  /** When its answer came (or it failed). */
  answeredAt: number;
  /** true for 200 (or, watching one check, for that check true), false for anything else. */
  ready: boolean;
  /** The HTTP status, or 0 when the probe was refused or timed out after 1.5 s. */
  status: number;
}

/**
 * Probes `/health/readiness` of one gateway every `everyMs`, open-loop (a slow answer does not delay the
 * next probe, as an orchestrator's periodic probe is not delayed), and keeps every sample, so a scenario
 * can ask when readiness flipped after its fault and when it flipped back. A flip is dated by when the
 * first probe that saw it was sent: on a loaded machine the answer's own latency is not the gateway's
 * reaction time.
 */
export class ReadinessWatch {
  readonly samples: ReadinessSample[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;
  private readonly pending = new Set<Promise<void>>();
  private readonly url: string;
  private readonly check: string | undefined;

  /**
   * `check`: watch one check of the payload (`checks.redis`) instead of the status, for a dependency
   * that is reported without gating readiness (Redis under fail_open).
   */
  constructor(baseUrl: string, everyMs = 100, check?: string) {
    this.url = `${baseUrl}/health/readiness`;
    this.check = check;
    this.loop = this.run(everyMs);
  }

  /** When the first probe sent at or after `since` that answered `ready` (or not) was sent, or undefined. */
  firstAfter(since: number, ready: boolean): number | undefined {
    return this.samples
      .filter((sample) => sample.at >= since && sample.ready === ready)
      .reduce<number | undefined>((first, sample) => Math.min(first ?? sample.at, sample.at), undefined);
  }

  /** Waits until a probe sent after `since` says `ready` (or not); when it was sent, or undefined. */
  async waitFor(ready: boolean, withinMs: number, since = performance.now()): Promise<number | undefined> {
    const deadline = performance.now() + withinMs;
    while (performance.now() < deadline) {
      const at = this.firstAfter(since, ready);
      if (at !== undefined) return at;
      await delay(20);
    }
    return this.firstAfter(since, ready);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.pending);
  }

  private async run(everyMs: number): Promise<void> {
    while (!this.stopped) {
      const probe = this.probe();
      this.pending.add(probe);
      void probe.finally(() => this.pending.delete(probe));
      await delay(everyMs);
    }
  }

  private async probe(): Promise<void> {
    const at = performance.now();
    let ready = false;
    let status = 0;
    try {
      const response = await fetch(this.url, { signal: AbortSignal.timeout(1_500) });
      const body = (await response.json().catch(() => ({}))) as { checks?: Record<string, boolean> };
      status = response.status;
      ready = this.check === undefined ? status === 200 : body.checks?.[this.check] === true;
    } catch {
      ready = false;
    }
    this.samples.push({ at, answeredAt: performance.now(), ready, status });
  }
}
