/**
 * Folds phase measurements into one summary per target and round, with the comparisons the report
 * makes: throughput against the bare proxy and latency added over the upstream alone, both taken
 * within the same round only.
 */

import type { TargetName } from '../run/bench-options.ts';
import type { PhaseMeasurement } from '../run/run-phase.ts';

export interface TargetSummary {
  target: TargetName;
  round: number;
  requestsPerSecond?: number;
  /** Throughput as a fraction of the bare proxy's in the same round. */
  throughputVsBare?: number;
  /** p50/p99 in µs by offered rate. */
  latencyByRate: Map<number, { p50: number; p99: number }>;
  /** p50 minus the direct target's p50 at the same rate and round, µs. */
  addedP50ByRate: Map<number, number>;
  firstByte?: { p50: number; p99: number };
  addedFirstByteP50?: number;
  lastByteP50?: number;
  /**
   * The translated phases and embeddings: p50 by phase (µs), and minus the direct target's p50 in the
   * same round.
   */
  latencyByFormat: Map<'responses' | 'messages' | 'embeddings', number>;
  addedP50ByFormat: Map<'responses' | 'messages' | 'embeddings', number>;
  /** The cached phase: p50 of cache hits at 200 req/s, µs. */
  cachedP50?: number;
  /** Admission phase (limited key only): p50s of the two keys, sent alternately, µs. */
  admission?: { limitedP50: number; unlimitedP50: number };
  peakResidentKilobytes?: number;
  /**
   * CPU per request at the highest offered rate (steadier than under saturation), else in the
   * throughput phase.
   */
  cpuMicrosecondsPerRequest?: number;
  /** The worst steal of this target's phases in the round. */
  stealPercentMax?: number;
  /** The most CPU other processes took during this target's phases in the round. */
  otherLoadPercentMax?: number;
  /** Failed, non-2xx and dropped requests over all its phases in the round. */
  failures: number;
}

export function summarizeTargets(measurements: readonly PhaseMeasurement[]): TargetSummary[] {
  const keys: string[] = [];
  const groups = new Map<string, PhaseMeasurement[]>();
  for (const measurement of measurements) {
    const key = `${measurement.round}\u0000${measurement.target}`;
    if (!groups.has(key)) {
      groups.set(key, []);
      keys.push(key);
    }
    groups.get(key)!.push(measurement);
  }
  const summaries = keys.map((key) => summarizeOne(groups.get(key)!));
  for (const summary of summaries) compare(summary, summaries);
  return summaries.sort((a, b) => targetOrder(a.target) - targetOrder(b.target) || a.round - b.round);
}

const ORDER: readonly TargetName[] = ['direct', 'bare', 'switchboard', 'switchboard-limited'];
const targetOrder = (name: TargetName) => ORDER.indexOf(name);

function summarizeOne(phases: PhaseMeasurement[]): TargetSummary {
  const first = phases[0]!;
  const summary: TargetSummary = {
    target: first.target,
    round: first.round,
    latencyByRate: new Map(),
    addedP50ByRate: new Map(),
    latencyByFormat: new Map(),
    addedP50ByFormat: new Map(),
    failures: 0,
  };
  let cpuRate = -1;
  for (const phase of phases) {
    summary.failures += phase.errors + phase.non2xx + phase.dropped;
    if (phase.stealPercent !== undefined) {
      summary.stealPercentMax = Math.max(summary.stealPercentMax ?? 0, phase.stealPercent);
    }
    if (phase.otherLoadPercent !== undefined) {
      summary.otherLoadPercentMax = Math.max(summary.otherLoadPercentMax ?? 0, phase.otherLoadPercent);
    }
    if (phase.peakResidentKilobytes !== undefined) {
      summary.peakResidentKilobytes = Math.max(
        summary.peakResidentKilobytes ?? 0,
        phase.peakResidentKilobytes,
      );
    }
    if (phase.phase === 'throughput') {
      summary.requestsPerSecond = phase.requestsPerSecond;
      if (cpuRate < 0) summary.cpuMicrosecondsPerRequest = phase.cpuMicrosecondsPerRequest;
    }
    if (phase.phase === 'latency' && phase.rate !== undefined && phase.latency) {
      summary.latencyByRate.set(phase.rate, { p50: phase.latency.p50, p99: phase.latency.p99 });
      if (phase.rate > cpuRate && phase.cpuMicrosecondsPerRequest !== undefined) {
        cpuRate = phase.rate;
        summary.cpuMicrosecondsPerRequest = phase.cpuMicrosecondsPerRequest;
      }
    }
    if (phase.phase === 'cached' && phase.latency) summary.cachedP50 = phase.latency.p50;
    if (
      (phase.phase === 'responses' || phase.phase === 'messages' || phase.phase === 'embeddings') &&
      phase.latency
    )
      summary.latencyByFormat.set(phase.phase, phase.latency.p50);
    if (phase.phase === 'admission' && phase.latency && phase.referenceLatency) {
      summary.admission = { limitedP50: phase.latency.p50, unlimitedP50: phase.referenceLatency.p50 };
    }
    if (phase.phase === 'stream') {
      if (phase.firstByte) summary.firstByte = { p50: phase.firstByte.p50, p99: phase.firstByte.p99 };
      if (phase.latency) summary.lastByteP50 = phase.latency.p50;
    }
  }
  return summary;
}

function compare(summary: TargetSummary, all: readonly TargetSummary[]): void {
  const sameRound = (target: TargetName) =>
    all.find((other) => other.target === target && other.round === summary.round);
  const bare = sameRound('bare');
  if (summary.requestsPerSecond !== undefined && bare?.requestsPerSecond) {
    summary.throughputVsBare = summary.requestsPerSecond / bare.requestsPerSecond;
  }
  const direct = sameRound('direct');
  if (!direct) return;
  for (const [rate, latency] of summary.latencyByRate) {
    const floor = direct.latencyByRate.get(rate);
    if (floor) summary.addedP50ByRate.set(rate, latency.p50 - floor.p50);
  }
  for (const [format, p50] of summary.latencyByFormat) {
    const floor = direct.latencyByFormat.get(format);
    if (floor !== undefined) summary.addedP50ByFormat.set(format, p50 - floor);
  }
  if (summary.firstByte && direct.firstByte)
    summary.addedFirstByteP50 = summary.firstByte.p50 - direct.firstByte.p50;
}
