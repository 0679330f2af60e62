/**
 * Whether admission may rely on the shared store: slow is not down. The store counts as down only on a
 * real outage signal: its connection is lost, or `outageTimeouts` timeouts in a row during which nothing
 * at all came back from it (it hangs). A timeout while other replies kept arriving (a loaded machine, a
 * busy Redis) is only slow and degrades nothing. While down, a probe pings the store until it answers.
 * Entering and leaving the degraded state are logged at warn.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { SharedStore, SharedStoreUnavailableError } from '../store/shared/shared-store.ts';

export interface StoreHealthOptions {
  store: SharedStore;
  degradedMode: 'fail_open' | 'fail_closed';
  logger: Logger;
  metrics: Metrics;
  /** Silent timeouts in a row that declare the store down (default 3). */
  outageTimeouts?: number;
  /** How often a down store is pinged (default 500 ms). */
  probeEveryMs?: number;
}

export class StoreHealth {
  private readonly options: StoreHealthOptions;
  private silentInARow = 0;
  private downSince: number | undefined;
  private decidedWhileDown = 0;
  private probe: NodeJS.Timeout | undefined;
  private probing = false;
  private outage = outageController();

  constructor(options: StoreHealthOptions) {
    this.options = options;
  }

  get outageTimeouts(): number {
    return this.options.outageTimeouts ?? 3;
  }

  /** True while the store is known to be down (then admission does not wait for it). */
  isDown(): boolean {
    if (this.downSince === undefined && !this.options.store.isAvailable()) {
      this.degrade('the connection to the shared store is lost');
    }
    return this.downSince !== undefined;
  }

  /** Aborted when the store is declared down, so admissions waiting for it stop at once. */
  get downSignal(): AbortSignal {
    return this.outage.signal;
  }

  /** The store answered a command. */
  answered(): void {
    this.silentInARow = 0;
    if (this.downSince !== undefined && this.options.store.isAvailable()) this.recover();
  }

  /** A command failed; only an outage signal degrades. */
  failed(error: SharedStoreUnavailableError): void {
    if (error.failure === 'disconnected') {
      this.degrade(error.message);
    } else if (error.failure === 'silent') {
      this.silentInARow++;
      if (this.silentInARow >= this.outageTimeouts) {
        this.degrade(`${this.silentInARow} commands in a row got no answer at all (${error.message})`);
      }
    }
  }

  /** An admission decided on this process's counters (fail_open). */
  decidedLocally(): void {
    this.decidedWhileDown++;
    this.options.metrics.rateLimitLocalDecisions.inc();
  }

  stop(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  private degrade(reason: string): void {
    if (this.downSince !== undefined) return;
    this.downSince = performance.now();
    this.decidedWhileDown = 0;
    const failOpen = this.options.degradedMode === 'fail_open';
    if (failOpen) this.options.metrics.rateLimitDegraded.set(1);
    this.options.logger.warn(
      { reason, redisDegradedMode: this.options.degradedMode },
      failOpen
        ? 'shared store down: admissions are decided on per-process counters until it answers again'
        : 'shared store down: proxied requests are refused (fail_closed) until it answers again',
    );
    this.probe = setInterval(() => this.ping(), this.options.probeEveryMs ?? 500);
    this.probe.unref();
    this.outage.abort();
  }

  private recover(): void {
    const downMs = Math.round(performance.now() - (this.downSince ?? 0));
    this.downSince = undefined;
    this.silentInARow = 0;
    this.outage = outageController();
    this.stop();
    this.options.metrics.rateLimitDegraded.set(0);
    this.options.logger.warn(
      { downMs, decidedLocally: this.decidedWhileDown },
      'shared store answers again: admissions are counted in it again',
    );
  }

  private ping(): void {
    if (this.probing || !this.options.store.isAvailable()) return;
    this.probing = true;
    this.options.store.ping().then(
      () => {
        this.probing = false;
        this.answered();
      },
      () => {
        this.probing = false;
      },
    );
  }
}

/** Every admission waiting for the store listens to one signal: no listener limit applies. */
function outageController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
