/**
 * Closed-loop throughput in one-second slices, the targets taking turns slice by slice (A B C A B C …),
 * so a burst of load from outside the benchmark lands on every target alike instead of on one. Each
 * target's slices are then merged into one measurement.
 */
import type { PhaseContext, PhaseMeasurement, PhasePlan } from './run-phase.ts';
import { runPhase } from './run-phase.ts';
import type { Target } from './start-targets.ts';

const SLICE_SECONDS = 1;
const SLICE_QUIET_WAIT_MS = 1_000;

export async function runThroughputSlices(
  targets: readonly Target[],
  plan: PhasePlan,
  round: number,
  context: PhaseContext,
): Promise<PhaseMeasurement[]> {
  const slices = new Map<Target, PhaseMeasurement[]>(targets.map((target) => [target, []]));
  const count = Math.max(1, Math.round(context.options.durationSeconds / SLICE_SECONDS));
  for (let slice = 0; slice < count; slice++) {
    for (const [index, target] of targets.entries()) {
      const quietWaitMs = index === 0 ? Math.min(context.quietWaitMs, SLICE_QUIET_WAIT_MS) : 0;
      const measurement = await runPhase(
        target,
        { ...plan, durationSeconds: SLICE_SECONDS, quietWaitMs },
        round,
        context,
      );
      slices.get(target)!.push(measurement);
    }
  }
  return targets.map((target) => mergeSlices(slices.get(target)!));
}

/**
 * One measurement from a target's slices: counts add up, throughput is every answer over every second,
 * CPU per request is weighted by the requests served, steal and other load are time-weighted means,
 * the tool's latency percentiles are medians over the slices, and peak RSS is the highest.
 */
export function mergeSlices(slices: readonly PhaseMeasurement[]): PhaseMeasurement {
  const first = slices[0]!;
  const sum = (pick: (slice: PhaseMeasurement) => number | undefined) =>
    slices.reduce((total, slice) => total + (pick(slice) ?? 0), 0);
  const seconds = sum((slice) => slice.seconds);
  const served = sum((slice) => slice.servedRequests);
  const timeWeighted = (pick: (slice: PhaseMeasurement) => number | undefined) =>
    slices.every((slice) => pick(slice) === undefined) || seconds === 0
      ? undefined
      : sum((slice) => (pick(slice) ?? 0) * (slice.seconds ?? 0)) / seconds;
  const withCpu = slices.filter((slice) => slice.cpuMicrosecondsPerRequest !== undefined);
  const latencies = slices.map((slice) => slice.latency).filter((latency) => latency !== undefined);
  const peaks = slices.map((slice) => slice.peakResidentKilobytes).filter((peak) => peak !== undefined);
  return {
    target: first.target,
    round: first.round,
    phase: first.phase,
    rate: first.rate,
    requests: sum((slice) => slice.requests),
    non2xx: sum((slice) => slice.non2xx),
    errors: sum((slice) => slice.errors),
    dropped: sum((slice) => slice.dropped),
    seconds,
    servedRequests: served,
    requestsPerSecond: seconds > 0 ? served / seconds : undefined,
    latency: latencies.length
      ? {
          p50: median(latencies.map((latency) => latency.p50)),
          p90: median(latencies.map((latency) => latency.p90)),
          p99: median(latencies.map((latency) => latency.p99)),
        }
      : undefined,
    cpuMicrosecondsPerRequest:
      withCpu.length && served > 0
        ? sum((slice) => (slice.cpuMicrosecondsPerRequest ?? 0) * (slice.servedRequests ?? 0)) / served
        : undefined,
    stealPercent: timeWeighted((slice) => slice.stealPercent),
    proxyCpuStealPercent: timeWeighted((slice) => slice.proxyCpuStealPercent),
    otherLoadPercent: timeWeighted((slice) => slice.otherLoadPercent),
    quietWaitMs: sum((slice) => slice.quietWaitMs),
    peakResidentKilobytes: peaks.length ? Math.max(...peaks) : undefined,
    firstError: slices.find((slice) => slice.firstError)?.firstError,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
