/**
 * Accessible recharts wrappers shared by the pages: each chart is a <figure> with a heading, a one-line
 * summary for screen readers, and the same numbers as a table (visually hidden until "Show as table").
 * The chart and its table are drawn from one series list, so they cannot disagree.
 */
import { type ReactNode, useId, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';

/** Series colours, each at least 3:1 against white (WCAG non-text contrast). */
export const chartColors = {
  blue: '#1f5fbf',
  red: '#b3261e',
  green: '#1e6b34',
  brown: '#8a5200',
  purple: '#6b3fa0',
  teal: '#0f6e74',
} as const;

/** Axis ticks and the unit under the x axis: the pages' muted text colour (7.8:1 on white, WCAG AA for text). */
const AXIS_TEXT = '#4a5360';

/** Dash patterns, so lines read apart without colour (e.g. p50 solid, p99 dashed). */
export const dashes = { solid: undefined, dashed: '6 4', dotted: '2 3' } as const;

export interface ChartSeries<T> {
  key: keyof T & string;
  label: string;
  color: string;
  dash?: string | undefined;
  /** Formats the values in the tooltip, the axis and the table. */
  format?: ((value: number | null) => string) | undefined;
}

export interface ChartFigureProps<T> {
  title: string;
  /** One sentence saying what the chart shows (its accessible description). */
  summary: string;
  data: T[];
  /** The field on the x axis, and how to print it (a time, a day, a name). */
  xKey: keyof T & string;
  xLabel: string;
  xFormat?: (value: string) => string;
  /** What the x values are in, e.g. "UTC": named under the axis, in the tooltip and the table's header. */
  xUnit?: string;
  series: ChartSeries<T>[];
  /** `line` joins the points; `bar` groups bars; `stacked` stacks bars of the series. */
  kind: 'line' | 'bar' | 'stacked';
  height?: number;
  headingLevel?: 2 | 3;
  children?: ReactNode;
}

export function ChartFigure<T extends object>(props: ChartFigureProps<T>) {
  const headingId = useId();
  const [showTable, setShowTable] = useState(false);
  const Heading = props.headingLevel === 3 ? 'h3' : 'h2';
  return (
    <figure className="chart card" aria-labelledby={headingId}>
      <figcaption className="chart-caption">
        <Heading id={headingId}>{props.title}</Heading>
        <button
          type="button"
          className="button-link"
          aria-expanded={showTable}
          onClick={() => setShowTable((shown) => !shown)}
        >
          {showTable ? 'Show as chart' : 'Show as table'}
        </button>
      </figcaption>
      {!showTable && (
        <div className="chart-canvas" role="img" aria-label={props.summary}>
          <SeriesChart {...props} height={props.height ?? 220} />
        </div>
      )}
      <div className={showTable ? 'chart-table' : 'visually-hidden'}>
        <ChartTable {...props} />
      </div>
      {props.children}
    </figure>
  );
}

function SeriesChart<T extends object>(props: ChartFigureProps<T> & { height: number }) {
  const common = {
    // Series keys are checked against T by ChartSeries; recharts only needs the rows.
    data: props.data as Record<string, unknown>[],
    responsive: true,
    accessibilityLayer: false,
    style: { width: '100%', height: props.height },
    margin: { top: 8, right: 16, bottom: 4, left: 8 },
  };
  const axes = chartAxes(props);
  if (props.kind === 'line')
    return (
      <LineChart {...common}>
        {axes}
        {props.series.map((series) => (
          <Line
            key={series.key}
            // Straight segments: a smoothed curve would draw values between buckets that never happened.
            type="linear"
            dataKey={series.key as string}
            name={series.label}
            stroke={series.color}
            strokeWidth={2}
            strokeDasharray={series.dash}
            // A bucket between empty ones is a lone point, which a line alone would not draw.
            dot={hasGaps(props.data, series.key) ? { r: 3, strokeDasharray: '' } : false}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    );
  return (
    <BarChart {...common}>
      {axes}
      {props.series.map((series) => (
        <Bar
          key={series.key}
          dataKey={series.key as string}
          name={series.label}
          fill={series.color}
          stackId={props.kind === 'stacked' ? 'stack' : undefined}
          isAnimationActive={false}
        />
      ))}
    </BarChart>
  );
}

/** Grid, axes (the x unit, e.g. "UTC", named under the x axis), tooltip and legend of a chart. */
function chartAxes<T extends object>(props: ChartFigureProps<T>) {
  const xFormat = props.xFormat ? (value: unknown) => props.xFormat!(String(value)) : undefined;
  const xUnit = props.xUnit;
  const tooltipLabel = (label: unknown) => {
    const text = xFormat ? xFormat(label) : String(label);
    return xUnit ? `${text} ${xUnit}` : text;
  };
  const yFormat = props.series[0]?.format;
  return [
    <CartesianGrid key="grid" stroke="#e3e7ec" vertical={false} />,
    <XAxis
      key="x"
      dataKey={props.xKey as string}
      tickFormatter={xFormat}
      minTickGap={24}
      tick={{ fontSize: 12, fill: AXIS_TEXT }}
      height={xUnit ? 44 : 30}
      label={
        xUnit ? { value: xUnit, position: 'insideBottomRight', fontSize: 12, fill: AXIS_TEXT } : undefined
      }
    />,
    <YAxis
      key="y"
      tickFormatter={yFormat ? (value: number) => yFormat(value) : undefined}
      width={72}
      tick={{ fontSize: 12, fill: AXIS_TEXT }}
    />,
    <Tooltip
      key="tooltip"
      labelFormatter={xFormat || xUnit ? tooltipLabel : undefined}
      formatter={(value, name) => {
        const series = props.series.find((candidate) => candidate.label === name);
        const number = typeof value === 'number' ? value : null;
        return series?.format ? series.format(number) : String(value ?? '—');
      }}
    />,
    <Legend key="legend" />,
  ];
}

function hasGaps<T>(data: T[], key: keyof T): boolean {
  return data.some((row) => row[key] === null || row[key] === undefined);
}

function ChartTable<T extends object>(props: ChartFigureProps<T>) {
  return (
    <table>
      <caption>{`${props.title} (data)`}</caption>
      <thead>
        <tr>
          <th scope="col">{props.xUnit ? `${props.xLabel} (${props.xUnit})` : props.xLabel}</th>
          {props.series.map((series) => (
            <th key={series.key} scope="col" className="numeric">
              {series.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.data.map((row) => {
          const x = String(row[props.xKey]);
          const label = props.xFormat ? props.xFormat(x) : x;
          return (
            <tr key={x}>
              <th scope="row">{label}</th>
              {props.series.map((series) => {
                const value = row[series.key] as number | null;
                return (
                  <td key={series.key} className="numeric">
                    {series.format ? series.format(value) : String(value ?? '—')}
                  </td>
                );
              })}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * A bucket's start in UTC, as short as its size allows: "14:05" within a day, "25 Nov 14:00" across
 * days, "25 Nov" for whole-day buckets. UTC because the gateway cuts buckets on UTC boundaries: a
 * local-time day label would name a day the bucket only partly covers. Charts say "UTC" (xUnit).
 */
export function formatBucketTime(iso: string, bucketSeconds: number, spanSeconds: number): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const day = date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
  if (bucketSeconds >= 86_400) return day;
  const time = date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
  if (spanSeconds <= 86_400) return time;
  return `${day} ${time}`;
}
