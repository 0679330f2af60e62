/** The spend summary: a chart (spend per day, or the top groups) and the table "Spend summary". */
import type { UseQueryResult } from '@tanstack/react-query';
import { ChartFigure, chartColors } from '../../components/charts.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { formatCount, formatUsd } from '../../components/format.ts';
import { EmptyState, ErrorNotice, Loading } from '../../components/query-state.tsx';
import { groupByLabel } from './spend-filters.ts';
import type { SpendSummaryAnswer, SpendSummaryRow } from './spend-types.ts';

/** Bars beyond this many groups would be unreadable; the table still lists every group. */
const CHART_GROUPS = 12;
const money = (value: number | null) => formatUsd(value);

export function SpendSummary(props: { query: UseQueryResult<SpendSummaryAnswer>; filterRefused: boolean }) {
  const { query } = props;
  if (query.isPending) return <Loading what="the spend summary" />;
  if (query.isError)
    return props.filterRefused ? (
      <p className="notice notice-error">No summary: fix the filter marked above.</p>
    ) : (
      <ErrorNotice
        error={query.error}
        title="Could not load the spend summary"
        retry={() => query.refetch()}
      />
    );
  const answer = query.data;
  if (answer.data.length === 0)
    return (
      <EmptyState title="No spend in this range.">
        Widen the dates or clear the filters. Requests sent with a key to /v1 endpoints are counted here.
      </EmptyState>
    );
  return (
    <>
      <SummaryChart answer={answer} />
      <SummaryTable answer={answer} />
    </>
  );
}

function SummaryChart(props: { answer: SpendSummaryAnswer }) {
  const { answer } = props;
  const total = answer.data.reduce((sum, row) => sum + row.cost, 0);
  if (answer.group_by === 'day')
    return (
      <ChartFigure<SpendSummaryRow>
        title="Spend by day"
        headingLevel={3}
        kind="bar"
        data={answer.data}
        xKey="group"
        xLabel="Day"
        summary={`${formatUsd(total)} over ${answer.data.length} days, from ${answer.data[0]?.group} to ${answer.data.at(-1)?.group}.`}
        series={[{ key: 'cost', label: 'Spend (USD)', color: chartColors.green, format: money }]}
      />
    );
  const label = groupByLabel(answer.group_by);
  const top = answer.data.slice(0, CHART_GROUPS);
  const leader = top[0];
  return (
    <ChartFigure<SpendSummaryRow>
      title={`Spend by ${label.toLowerCase()}`}
      headingLevel={3}
      kind="bar"
      data={top}
      xKey="group"
      xLabel={label}
      summary={`${formatUsd(total)} across ${answer.data.length} groups; the most by ${leader?.group} with ${formatUsd(leader?.cost)}.`}
      series={[{ key: 'cost', label: 'Spend (USD)', color: chartColors.green, format: money }]}
    />
  );
}

function SummaryTable(props: { answer: SpendSummaryAnswer }) {
  return (
    <DataTable<SpendSummaryRow>
      caption="Spend summary"
      rows={props.answer.data}
      rowKey={(row) => row.group}
      columns={[
        { header: groupByLabel(props.answer.group_by), cell: (row) => row.group },
        { header: 'Requests', numeric: true, cell: (row) => formatCount(row.requests) },
        { header: 'Failed', numeric: true, cell: (row) => formatCount(row.failed_requests) },
        { header: 'Prompt tokens', numeric: true, cell: (row) => formatCount(row.prompt_tokens) },
        { header: 'Completion tokens', numeric: true, cell: (row) => formatCount(row.completion_tokens) },
        { header: 'Usage unknown', numeric: true, cell: (row) => formatCount(row.unknown_usage_requests) },
        { header: 'Cost', numeric: true, cell: (row) => formatUsd(row.cost) },
      ]}
    />
  );
}
