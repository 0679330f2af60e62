/** The overview's headline numbers: one card per figure, each named by its label for assistive technology. */
import { type ReactNode, useId } from 'react';
import type { OverviewAnswer } from '../../api/console-types.ts';
import { formatCount, formatMs, formatUsd } from '../../components/format.ts';
import { windowPhrase } from './overview-window.ts';

export function StatCard(props: { label: string; value: string; detail?: ReactNode }) {
  const id = useId();
  return (
    <section className="stat-card card" aria-labelledby={id}>
      <h3 id={id} className="stat-label">
        {props.label}
      </h3>
      <p className="stat">{props.value}</p>
      {props.detail && <p className="stat-detail">{props.detail}</p>}
    </section>
  );
}

export function StatCards(props: { answer: OverviewAnswer }) {
  const { totals, rejections, window } = props.answer;
  const rejectionSpan = rejections ? minutesPhrase(rejections.window_seconds) : null;
  const refusals = (count: number | undefined) => (rejections ? formatCount(count) : '—');
  const refusalDetail = rejectionSpan
    ? `in ${rejectionSpan}, all replicas`
    : 'unavailable: the shared store (Redis) is unreachable';
  return (
    <section className="overview-section" aria-labelledby="overview-totals">
      <h2 id="overview-totals" className="visually-hidden">
        Totals for {windowPhrase(window)}
      </h2>
      <div className="stat-grid">
        <StatCard label="Requests" value={formatCount(totals.requests)} />
        <StatCard
          label="Errors"
          value={formatCount(totals.errors)}
          detail={`${errorRate(totals.errors, totals.requests)} of requests`}
        />
        <StatCard label="Latency p50" value={formatMs(totals.latency_p50_ms)} detail="median, approximate" />
        <StatCard
          label="Latency p99"
          value={formatMs(totals.latency_p99_ms)}
          detail="99th percentile, approximate"
        />
        <StatCard
          label="Tokens"
          value={formatCount(totals.total_tokens)}
          detail={`${formatCount(totals.prompt_tokens)} prompt · ${formatCount(totals.completion_tokens)} completion`}
        />
        <StatCard
          label="Spend"
          value={headlineUsd(totals.spend)}
          detail={
            headlineUsd(totals.spend) === formatUsd(totals.spend)
              ? 'USD'
              : `exactly ${formatUsd(totals.spend)}`
          }
        />
        <StatCard
          label="Rate-limit rejections"
          value={refusals(rejections?.rate_limit)}
          detail={refusalDetail}
        />
        <StatCard label="Budget rejections" value={refusals(rejections?.budget)} detail={refusalDetail} />
        <StatCard
          label="Fallbacks"
          value={formatCount(totals.fallbacks)}
          detail="answered by another deployment or model group"
        />
      </div>
    </section>
  );
}

const dollars = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  maximumFractionDigits: 2,
});

/** Whole cents from a dollar up (the detail line keeps the exact figure); small sums keep their digits. */
export function headlineUsd(value: number): string {
  return value >= 1 ? dollars.format(value) : formatUsd(value);
}

/** Errors as a share of requests, "—" when there were none (no 0/0). */
export function errorRate(errors: number, requests: number): string {
  if (requests === 0) return '—';
  const percent = (errors / requests) * 100;
  return `${percent < 10 ? percent.toFixed(1) : Math.round(percent)}%`;
}

function minutesPhrase(seconds: number): string {
  if (seconds === 3600) return 'the last hour';
  if (seconds % 60 === 0) return `the last ${seconds / 60} minutes`;
  return `the last ${seconds} seconds`;
}
