/**
 * Per-process runtime state of each deployment: requests in flight, recent latency (exponentially
 * weighted), failures in the last minute and cooldowns. A deployment that fails `allowed_fails` times
 * within a minute is excluded for `cooldown_time`; a 429 with Retry-After cools it for that long.
 */
import type { Clock } from '../lib/clock.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';

const FAILURE_WINDOW_MS = 60_000;
const SMOOTHING = 0.3;

export interface HealthSettings {
  allowedFails: number;
  cooldownMs: number;
  /** Latency samples older than this no longer count (routing_strategy_args.ttl). */
  latencyTtlMs: number;
}

export interface DeploymentState {
  inFlight: number;
  requests: number;
  successes: number;
  failures: number;
  /** Smoothed total latency of non-streaming answers, in ms. */
  latencyMs: number | undefined;
  /** Smoothed time to first chunk of streamed answers, in ms. */
  timeToFirstTokenMs: number | undefined;
  lastSampleAt: number;
  recentFailures: number[];
  cooldownUntil: number;
}

export class DeploymentHealth {
  private readonly states = new Map<string, DeploymentState>();
  private readonly settings: HealthSettings;
  private readonly clock: Clock;

  constructor(settings: HealthSettings, clock: Clock) {
    this.settings = settings;
    this.clock = clock;
  }

  state(deploymentId: string): DeploymentState {
    let state = this.states.get(deploymentId);
    if (!state) {
      state = {
        inFlight: 0,
        requests: 0,
        successes: 0,
        failures: 0,
        latencyMs: undefined,
        timeToFirstTokenMs: undefined,
        lastSampleAt: 0,
        recentFailures: [],
        cooldownUntil: 0,
      };
      this.states.set(deploymentId, state);
    }
    return state;
  }

  isCoolingDown(deploymentId: string): boolean {
    return this.state(deploymentId).cooldownUntil > this.clock.now();
  }

  /** Milliseconds until the cooldown ends (0 when not cooling down). */
  cooldownRemainingMs(deploymentId: string): number {
    return Math.max(0, this.state(deploymentId).cooldownUntil - this.clock.now());
  }

  started(deploymentId: string): void {
    const state = this.state(deploymentId);
    state.inFlight++;
    state.requests++;
  }

  finished(deploymentId: string): void {
    const state = this.state(deploymentId);
    state.inFlight = Math.max(0, state.inFlight - 1);
  }

  succeeded(deploymentId: string, sample: { latencyMs?: number; timeToFirstTokenMs?: number }): void {
    const state = this.state(deploymentId);
    state.successes++;
    const now = this.clock.now();
    const fresh = now - state.lastSampleAt <= this.settings.latencyTtlMs;
    if (sample.latencyMs !== undefined)
      state.latencyMs = smooth(fresh ? state.latencyMs : undefined, sample.latencyMs);
    if (sample.timeToFirstTokenMs !== undefined) {
      state.timeToFirstTokenMs = smooth(
        fresh ? state.timeToFirstTokenMs : undefined,
        sample.timeToFirstTokenMs,
      );
    }
    state.lastSampleAt = now;
  }

  /** Records a failure; returns true when it put the deployment into cooldown. */
  failed(deploymentId: string, error: UpstreamError): boolean {
    const state = this.state(deploymentId);
    state.failures++;
    if (!countsAgainstDeployment(error)) return false;
    const now = this.clock.now();
    if (error.status === 429 && error.retryAfterMs !== undefined && error.retryAfterMs > 0) {
      return this.coolDown(state, now + error.retryAfterMs);
    }
    state.recentFailures = state.recentFailures.filter((at) => now - at < FAILURE_WINDOW_MS);
    state.recentFailures.push(now);
    if (state.recentFailures.length >= Math.max(1, this.settings.allowedFails)) {
      state.recentFailures = [];
      return this.coolDown(state, now + this.settings.cooldownMs);
    }
    return false;
  }

  /** Latency fresh enough to route on, or undefined for an unmeasured (or stale) deployment. */
  freshLatency(deploymentId: string, streaming: boolean): number | undefined {
    const state = this.state(deploymentId);
    if (this.clock.now() - state.lastSampleAt > this.settings.latencyTtlMs) return undefined;
    return streaming
      ? (state.timeToFirstTokenMs ?? state.latencyMs)
      : (state.latencyMs ?? state.timeToFirstTokenMs);
  }

  recentFailureCount(deploymentId: string): number {
    const now = this.clock.now();
    return this.state(deploymentId).recentFailures.filter((at) => now - at < FAILURE_WINDOW_MS).length;
  }

  private coolDown(state: DeploymentState, until: number): boolean {
    const wasCooling = state.cooldownUntil > this.clock.now();
    state.cooldownUntil = Math.max(state.cooldownUntil, until);
    return !wasCooling;
  }
}

/**
 * Caller mistakes (400, 422, an answer too large for what was asked) and cancellations say nothing
 * about the deployment's health.
 */
function countsAgainstDeployment(error: UpstreamError): boolean {
  if (error.kind === 'aborted' || error.kind === 'too_large') return false;
  if (error.kind === 'status' && error.status !== undefined && error.status < 500) {
    return (
      error.status === 429 ||
      error.status === 401 ||
      error.status === 403 ||
      error.status === 404 ||
      error.status === 408
    );
  }
  return true;
}

function smooth(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous + SMOOTHING * (sample - previous);
}
