/** Turns a soak run's measurements into its verdicts (the rules are in verdicts.ts, the bounds in bounds.ts). */
import {
  DEADLINE_MS,
  DESCRIPTOR_ALLOWANCE,
  LAG_MAX_GROWTH_MS_PER_10_MIN,
  LAG_SHORT_RUN_MAX_MEAN_MS,
  MAX_ERROR_RATIO,
  RSS_MAX_GROWTH_MB_PER_10_MIN,
  RSS_SHORT_RUN_CEILING_MB,
  TREND_MIN_SECONDS,
  WARMUP_FRACTION,
  WARMUP_MIN_SECONDS,
} from './bounds.ts';
import { afterWarmup, type Point } from './slope.ts';
import type { SoakRun } from './soak.ts';
import {
  deadlineVerdict,
  errorRateVerdict,
  returnsToBaseline,
  type TrendVerdict,
  trendVerdict,
  type Verdict,
} from './verdicts.ts';

export interface Judgement {
  pass: boolean;
  verdicts: Verdict[];
  /** Trends reported but not judged (heap, handles): where to look when RSS fails. */
  figures: TrendVerdict[];
}

export function judge(run: SoakRun): Judgement {
  const load = run.samples.filter((sample) => sample.phase === 'load');
  const series = (pick: (sample: (typeof load)[number]) => number): Point[] =>
    load
      .map((sample) => ({ t: sample.t, value: pick(sample) }))
      .filter((point) => Number.isFinite(point.value));
  // The warm-up is a share of the load phase, but never shorter than WARMUP_MIN_SECONDS.
  const span = load.length > 1 ? load.at(-1)!.t - load[0]!.t : 1;
  const warmupFraction = Math.min(1, Math.max(WARMUP_FRACTION, WARMUP_MIN_SECONDS / span));
  const trend = (name: string, unit: string, points: Point[], bound: number) =>
    trendVerdict({ name, unit, points, warmupFraction, maxGrowthPerTenMinutes: bound });

  const verdicts: Verdict[] = [
    {
      name: 'gateway alive',
      pass: run.gatewayExit === null,
      measured: run.gatewayExit ?? 'running',
      bound: 'no exit during the run',
    },
    span >= TREND_MIN_SECONDS
      ? trend(
          'RSS trend',
          'MB',
          series((sample) => sample.rssMb),
          RSS_MAX_GROWTH_MB_PER_10_MIN,
        )
      : rssCeiling(
          series((sample) => sample.rssMb),
          warmupFraction,
        ),
    span >= TREND_MIN_SECONDS
      ? trend(
          'event-loop lag trend (mean)',
          'ms',
          series((sample) => sample.lagMeanMs),
          LAG_MAX_GROWTH_MS_PER_10_MIN,
        )
      : lagCeiling(
          series((sample) => sample.lagMeanMs),
          warmupFraction,
        ),
    {
      name: 'metrics scrapes',
      pass: load.filter((sample) => sample.scrapeError === null).length >= load.length / 2,
      measured: `${load.filter((sample) => sample.scrapeError !== null).length} of ${load.length} failed`,
      bound: 'at most half fail',
    },
    returnsToBaseline('descriptors after load', run.baseline.fds, run.afterLoad.fds, DESCRIPTOR_ALLOWANCE),
    returnsToBaseline(
      'sockets after load',
      run.baseline.sockets,
      run.afterLoad.sockets,
      DESCRIPTOR_ALLOWANCE,
    ),
    errorRateVerdict('chat errors', run.chat, MAX_ERROR_RATIO),
    errorRateVerdict('MCP errors', run.mcp, MAX_ERROR_RATIO),
    deadlineVerdict('chat deadline', run.chat.timeouts, run.chat.slowestMs, DEADLINE_MS),
    deadlineVerdict('MCP deadline', run.mcp.timeouts, run.mcp.slowestMs, DEADLINE_MS),
  ];
  // Unbounded: these explain an RSS or lag failure (a heap leak, or handles piling up) without judging.
  const unbounded = Number.POSITIVE_INFINITY;
  const figures = [
    ...(span >= TREND_MIN_SECONDS
      ? []
      : [
          trend(
            'RSS trend (too short to judge)',
            'MB',
            series((sample) => sample.rssMb),
            unbounded,
          ),
          trend(
            'event-loop lag trend (too short to judge)',
            'ms',
            series((sample) => sample.lagMeanMs),
            unbounded,
          ),
        ]),
    trend(
      'heap used trend',
      'MB',
      series((sample) => sample.heapUsedMb),
      unbounded,
    ),
    trend(
      'active handles trend',
      'handles',
      series((sample) => sample.activeHandles),
      unbounded,
    ),
    trend(
      'event-loop lag trend (p99)',
      'ms',
      series((sample) => sample.lagP99Ms),
      unbounded,
    ),
  ];
  return { pass: verdicts.every((verdict) => verdict.pass), verdicts, figures };
}

/** A short run's RSS check: no new high above the warm-up's peak by more than the ceiling. */
function rssCeiling(points: readonly Point[], warmupFraction: number): Verdict {
  const kept = afterWarmup(points, warmupFraction);
  const warmupPeak = Math.max(...points.slice(0, points.length - kept.length).map((point) => point.value));
  const laterPeak = Math.max(...kept.map((point) => point.value));
  const enough = kept.length > 0 && Number.isFinite(warmupPeak);
  return {
    name: `RSS ceiling (run under ${TREND_MIN_SECONDS} s: slope not judged)`,
    pass: enough && laterPeak <= warmupPeak + RSS_SHORT_RUN_CEILING_MB,
    measured: enough
      ? `peak ${laterPeak.toFixed(0)} MB after warm-up, ${warmupPeak.toFixed(0)} MB during it`
      : 'no samples on one side of the warm-up',
    bound: `≤ warm-up peak + ${RSS_SHORT_RUN_CEILING_MB} MB`,
  };
}

/** A short run's lag check: the mean delay after the warm-up stays below a gross bound. */
function lagCeiling(points: readonly Point[], warmupFraction: number): Verdict {
  const kept = afterWarmup(points, warmupFraction);
  const mean = kept.reduce((sum, point) => sum + point.value, 0) / kept.length;
  return {
    name: `event-loop lag (run under ${TREND_MIN_SECONDS} s: slope not judged)`,
    pass: kept.length > 0 && mean <= LAG_SHORT_RUN_MAX_MEAN_MS,
    measured: kept.length > 0 ? `mean ${mean.toFixed(1)} ms after warm-up` : 'no samples after warm-up',
    bound: `≤ ${LAG_SHORT_RUN_MAX_MEAN_MS} ms`,
  };
}
