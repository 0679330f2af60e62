/**
 * The benchmark's goals (issue 3's hot path, issue 4's admission cost, the translated and embeddings
 * endpoints), judged per round: a goal
 * passes when it holds in every measured round, is mixed when it holds in some, fails in none.
 */
import type { TargetName } from '../run/bench-options.ts';
import type { TargetSummary } from './target-summary.ts';

export type Verdict = 'pass' | 'fail' | 'mixed' | 'not measured';

export interface GoalResult {
  goal: string;
  /** The measured value of each round, formatted ('—' when not measured). */
  perRound: string[];
  verdict: Verdict;
}

/** The offered rate at which added latency and admission cost are judged. */
export const GOAL_RATE = 200;
const PEAK_RESIDENT_LIMIT_BYTES = 150e6;

interface Goal {
  goal: string;
  value(summaries: Lookup): number | undefined;
  passes(value: number): boolean;
  format(value: number): string;
}

type Lookup = (target: TargetName) => TargetSummary | undefined;

const milliseconds = (microseconds: number) => `${(microseconds / 1000).toFixed(2)} ms`;

const GOALS: readonly Goal[] = [
  {
    goal: 'Throughput ≥ 60% of the bare proxy',
    value: (find) => find('switchboard')?.throughputVsBare,
    passes: (ratio) => ratio >= 0.6,
    format: (ratio) => `${(ratio * 100).toFixed(0)}%`,
  },
  {
    goal: `Added p50 < 1 ms at ${GOAL_RATE} req/s`,
    value: (find) => find('switchboard')?.addedP50ByRate.get(GOAL_RATE),
    passes: (microseconds) => microseconds < 1000,
    format: milliseconds,
  },
  {
    goal: `Added p50 < 1 ms at ${GOAL_RATE} req/s on /v1/responses (translated to chat)`,
    value: (find) => find('switchboard')?.addedP50ByFormat.get('responses'),
    passes: (microseconds) => microseconds < 1000,
    format: milliseconds,
  },
  {
    goal: `Added p50 < 1 ms at ${GOAL_RATE} req/s on /v1/messages (translated to chat)`,
    value: (find) => find('switchboard')?.addedP50ByFormat.get('messages'),
    passes: (microseconds) => microseconds < 1000,
    format: milliseconds,
  },
  {
    goal: `Added p50 < 1 ms at ${GOAL_RATE} req/s on /v1/embeddings (4 base64 vectors of 1,536 floats)`,
    value: (find) => find('switchboard')?.addedP50ByFormat.get('embeddings'),
    passes: (microseconds) => microseconds < 1000,
    format: milliseconds,
  },
  {
    goal: `Cache hit p50 ≤ 80% of the pass-through p50 at ${GOAL_RATE} req/s`,
    value: (find) => {
      const summary = find('switchboard');
      const passThrough = summary?.latencyByRate.get(GOAL_RATE)?.p50;
      return summary?.cachedP50 !== undefined && passThrough ? summary.cachedP50 / passThrough : undefined;
    },
    passes: (ratio) => ratio <= 0.8,
    format: (ratio) => `${(ratio * 100).toFixed(0)}%`,
  },
  {
    goal: 'Added streaming TTFB p50 < 1 ms',
    value: (find) => find('switchboard')?.addedFirstByteP50,
    passes: (microseconds) => microseconds < 1000,
    format: milliseconds,
  },
  {
    goal: 'Peak RSS < 150 MB',
    value: (find) => {
      const values = [find('switchboard'), find('switchboard-limited')]
        .map((summary) => summary?.peakResidentKilobytes)
        .filter((value) => value !== undefined);
      return values.length ? Math.max(...values) * 1024 : undefined;
    },
    passes: (bytes) => bytes < PEAK_RESIDENT_LIMIT_BYTES,
    format: (bytes) => `${(bytes / 1e6).toFixed(0)} MB`,
  },
  {
    goal: `Admission cost ≤ 0.5 ms (limited key p50 − unlimited key p50 at ${GOAL_RATE} req/s; issue 4)`,
    value: (find) => {
      // Best: the admission phase, keys alternating request by request. Else the two separate phases.
      const admission = find('switchboard-limited')?.admission;
      if (admission) return admission.limitedP50 - admission.unlimitedP50;
      const limited = find('switchboard-limited')?.latencyByRate.get(GOAL_RATE);
      const unlimited = find('switchboard')?.latencyByRate.get(GOAL_RATE);
      return limited && unlimited ? limited.p50 - unlimited.p50 : undefined;
    },
    passes: (microseconds) => microseconds <= 500,
    format: milliseconds,
  },
];

export function evaluateGoals(summaries: readonly TargetSummary[], rounds: number): GoalResult[] {
  return GOALS.map((goal) => {
    const values = Array.from({ length: rounds }, (_, index) =>
      goal.value((target) =>
        summaries.find((summary) => summary.target === target && summary.round === index + 1),
      ),
    );
    const measured = values.filter((value) => value !== undefined);
    const passed = measured.filter((value) => goal.passes(value)).length;
    const verdict: Verdict =
      measured.length === 0
        ? 'not measured'
        : passed === measured.length
          ? 'pass'
          : passed === 0
            ? 'fail'
            : 'mixed';
    return {
      goal: goal.goal,
      perRound: values.map((value) => (value === undefined ? '—' : goal.format(value))),
      verdict,
    };
  });
}
