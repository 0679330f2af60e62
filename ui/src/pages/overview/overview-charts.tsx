/** The overview's charts over time: requests and errors, latency, tokens, spend, and rejections per minute. */
import type { OverviewAnswer, OverviewBucket, Rejections } from '../../api/console-types.ts';
import { ChartFigure, chartColors, dashes, formatBucketTime } from '../../components/charts.tsx';
import { formatCount, formatMs, formatUsd } from '../../components/format.ts';
import { windowPhrase } from './overview-window.ts';

const count = (value: number | null) => formatCount(value);
const money = (value: number | null) => formatUsd(value);
const millis = (value: number | null) => formatMs(value);

export function OverviewCharts(props: { answer: OverviewAnswer }) {
  const { series, totals, bucket_seconds: bucketSeconds } = props.answer;
  const span = (Date.parse(props.answer.to) - Date.parse(props.answer.from)) / 1000;
  const bucketTime = (start: string) => formatBucketTime(start, bucketSeconds, span);
  const phrase = windowPhrase(props.answer.window);
  const shared = { data: series, xKey: 'start' as const, xLabel: 'Time', xFormat: bucketTime, xUnit: 'UTC' };
  const busiest = peak(series, 'requests');
  const dearest = peak(series, 'spend');
  return (
    <div className="chart-grid">
      <ChartFigure<OverviewBucket>
        {...shared}
        title="Requests and errors"
        kind="line"
        summary={
          `${formatCount(totals.requests)} requests and ${formatCount(totals.errors)} errors in ${phrase}` +
          (busiest
            ? `; busiest at ${bucketTime(busiest.start)} UTC with ${formatCount(busiest.requests)}.`
            : '.')
        }
        series={[
          { key: 'requests', label: 'Requests', color: chartColors.blue, format: count },
          { key: 'errors', label: 'Errors', color: chartColors.red, dash: dashes.dashed, format: count },
        ]}
      />
      <ChartFigure<OverviewBucket>
        {...shared}
        title="Latency"
        kind="line"
        summary={`Latency in ${phrase}: median ${formatMs(totals.latency_p50_ms)}, 99th percentile ${formatMs(totals.latency_p99_ms)} (approximate).`}
        series={[
          { key: 'latency_p50_ms', label: 'p50', color: chartColors.blue, format: millis },
          {
            key: 'latency_p99_ms',
            label: 'p99',
            color: chartColors.brown,
            dash: dashes.dashed,
            format: millis,
          },
        ]}
      />
      <ChartFigure<OverviewBucket>
        {...shared}
        title="Tokens"
        kind="stacked"
        summary={`${formatCount(totals.prompt_tokens)} prompt and ${formatCount(totals.completion_tokens)} completion tokens in ${phrase}.`}
        series={[
          { key: 'prompt_tokens', label: 'Prompt tokens', color: chartColors.blue, format: count },
          { key: 'completion_tokens', label: 'Completion tokens', color: chartColors.teal, format: count },
        ]}
      />
      <ChartFigure<OverviewBucket>
        {...shared}
        title="Spend"
        kind="bar"
        summary={
          `${formatUsd(totals.spend)} spent in ${phrase}` +
          (dearest ? `; most at ${bucketTime(dearest.start)} UTC with ${formatUsd(dearest.spend)}.` : '.')
        }
        series={[{ key: 'spend', label: 'Spend (USD)', color: chartColors.green, format: money }]}
      />
    </div>
  );
}

/** Identity rate-limit and budget refusals per minute, across replicas. */
export function RejectionsChart(props: { rejections: Rejections }) {
  const { rejections } = props;
  const span = rejections.window_seconds;
  return (
    <ChartFigure<Rejections['series'][number]>
      title="Rejections per minute"
      kind="stacked"
      height={140}
      data={rejections.series}
      xKey="start"
      xLabel="Minute"
      xFormat={(start) => formatBucketTime(start, 60, span)}
      xUnit="UTC"
      summary={`${formatCount(rejections.rate_limit)} rate-limit and ${formatCount(rejections.budget)} budget rejections in the last ${Math.round(span / 60)} minutes.`}
      series={[
        { key: 'rate_limit', label: 'Rate limit', color: chartColors.purple, format: count },
        { key: 'budget', label: 'Budget', color: chartColors.red, format: count },
      ]}
    />
  );
}

/** The bucket with the highest value, or null when every bucket is zero. */
function peak(series: OverviewBucket[], field: 'requests' | 'spend'): OverviewBucket | null {
  let best: OverviewBucket | null = null;
  for (const bucket of series) if (bucket[field] > (best?.[field] ?? 0)) best = bucket;
  return best;
}
