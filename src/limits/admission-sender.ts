/**
 * How an admission reaches the shared store: a slow answer is waited for up to the store's deadline and
 * then tried again (a late attempt changes nothing in the store), and only once the store is down
 * (store-health.ts) is the admission decided without it: on this process's counters under fail_open,
 * with a 503 under fail_closed. Output-governed admissions have no per-process fallback (spec rule 10).
 */
import type { Metrics } from '../observability/metrics.ts';
import {
  OutputCountersUnsupportedError,
  type SharedStore,
  SharedStoreUnavailableError,
} from '../store/shared/shared-store.ts';
import { outputUnavailable } from './output-errors.ts';
import { storeUnavailable } from './rate-limit-errors.ts';
import type { StoreHealth } from './store-health.ts';

export interface AdmissionSenderOptions {
  store: SharedStore;
  /** Per-process counters for fail_open while the shared store is down. */
  fallback: SharedStore;
  degradedMode: 'fail_open' | 'fail_closed';
  health: StoreHealth;
  metrics: Metrics;
}

export class AdmissionSender {
  private readonly options: AdmissionSenderOptions;

  constructor(options: AdmissionSenderOptions) {
    this.options = options;
  }

  /** Sends to the shared store; once it is down, to the fallback (fail_open) or nowhere (fail_closed). */
  async send<T>(
    operation: (store: SharedStore, signal: AbortSignal) => Promise<T>,
  ): Promise<{ response: T; store: SharedStore }> {
    const { store, fallback, degradedMode, health } = this.options;
    const answered = await this.attempt(operation);
    if (answered) return { response: answered.response, store };
    this.options.metrics.rateLimitStoreErrors.inc();
    if (degradedMode === 'fail_closed') throw storeUnavailable();
    health.decidedLocally();
    return { response: await operation(fallback, health.downSignal), store: fallback };
  }

  /**
   * Sends an output-governed admission: only the shared store can answer it, so a store that is down, or
   * one that cannot keep output counters, answers 503 output_tpm_unavailable whatever the degraded mode.
   */
  async sendGoverned<T>(
    operation: (store: SharedStore, signal: AbortSignal) => Promise<T>,
  ): Promise<{ response: T; store: SharedStore }> {
    const { store, metrics } = this.options;
    let answered: { response: T } | undefined;
    try {
      answered = await this.attempt(operation);
    } catch (error) {
      if (!(error instanceof OutputCountersUnsupportedError)) throw error;
      metrics.outputTpmEvents.inc({ event: 'unavailable' });
      throw outputUnavailable(
        'output-token limits need the shared Redis store (general_settings.redis_url).',
      );
    }
    if (answered) return { response: answered.response, store };
    metrics.rateLimitStoreErrors.inc();
    metrics.outputTpmEvents.inc({ event: 'unavailable' });
    throw outputUnavailable('the shared store is unreachable.');
  }

  /** The store's answer, or undefined once it is down or stayed slow for as many attempts. */
  private async attempt<T>(
    operation: (store: SharedStore, signal: AbortSignal) => Promise<T>,
  ): Promise<{ response: T } | undefined> {
    const { store, health } = this.options;
    for (let attempt = 0; attempt < health.outageTimeouts && !health.isDown(); attempt++) {
      try {
        const response = await operation(store, health.downSignal);
        health.answered();
        return { response };
      } catch (error) {
        if (!(error instanceof SharedStoreUnavailableError)) throw error;
        health.failed(error);
      }
    }
    return undefined;
  }
}
