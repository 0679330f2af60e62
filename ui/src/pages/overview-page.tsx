/**
 * Overview (/ui/): the gateway's traffic, latency, tokens and spend over a time window kept in the URL
 * (?window=7d), refreshed every 30 s while the tab is visible.
 */
import { keepPreviousData, type UseQueryResult, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import type { OverviewAnswer, OverviewWindow } from '../api/console-types.ts';
import { useSession } from '../auth/session.tsx';
import { SelectField } from '../components/field.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { PolledState } from '../components/polled-state.tsx';
import { EmptyState } from '../components/query-state.tsx';
import { OverviewCharts, RejectionsChart } from './overview/overview-charts.tsx';
import { overviewWindows, parseWindow } from './overview/overview-window.ts';
import { StatCards } from './overview/stat-cards.tsx';
import { TopTables } from './overview/top-tables.tsx';
import './overview/overview.css';

/** How often the numbers refresh while the tab is visible (react-query pauses it in a hidden tab). */
export const OVERVIEW_REFRESH_MS = 30_000;

export function OverviewPage() {
  const { api, organizationId } = useSession();
  const [params, setParams] = useSearchParams();
  const timeWindow = parseWindow(params.get('window'));
  const query = useQuery({
    queryKey: ['console', 'overview', timeWindow],
    queryFn: () => api.get<OverviewAnswer>('/console/overview', { window: timeWindow }),
    refetchInterval: OVERVIEW_REFRESH_MS,
    // The last window's figures stay up (the Refresh button says "Refreshing…") until the new ones arrive.
    placeholderData: keepPreviousData,
  });
  // Busy only while the operator's own refresh, or a newly chosen window, loads: the 30 s poll must not
  // take the focus off the button (aria-disabled keeps it, as on the Models page).
  const refresh = useMutation({ mutationFn: () => query.refetch() });
  const busy = refresh.isPending || (query.isPlaceholderData && query.isFetching);
  // The answer says which organization its figures cover; the session says it before the first answer.
  const narrowedTo = query.data?.organization_id ?? organizationId;
  const chooseWindow = (value: OverviewWindow) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      next.set('window', value);
      return next;
    });
  return (
    <>
      <PageHeader
        title="Overview"
        description={
          organizationId === null ? 'Traffic, latency, tokens and spend of the whole gateway.' : undefined
        }
        actions={
          <div className="overview-controls">
            <SelectField
              label="Time window"
              value={timeWindow}
              onChange={(event) => chooseWindow(parseWindow(event.target.value))}
            >
              {overviewWindows.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </SelectField>
            <button
              type="button"
              className="button-secondary"
              aria-disabled={busy || undefined}
              onClick={() => {
                if (!busy) refresh.mutate();
              }}
            >
              {busy ? 'Refreshing…' : 'Refresh'}
            </button>
            {query.dataUpdatedAt > 0 && (
              <p className="updated-at">
                Updated{' '}
                <time dateTime={new Date(query.dataUpdatedAt).toISOString()}>
                  {clock(query.dataUpdatedAt)}
                </time>
              </p>
            )}
          </div>
        }
      />
      {narrowedTo && <p className="notice notice-info">Showing organization {narrowedTo} only.</p>}
      <OverviewBody query={query} />
    </>
  );
}

function OverviewBody(props: { query: UseQueryResult<OverviewAnswer> }) {
  return (
    <PolledState query={props.query} what="the overview">
      {(answer) => <OverviewContent answer={answer} />}
    </PolledState>
  );
}

function OverviewContent(props: { answer: OverviewAnswer }) {
  const { answer } = props;
  return (
    <>
      <StatCards answer={answer} />
      {answer.totals.requests === 0 ? (
        <EmptyState title="No requests in this window yet.">
          Create a key under <Link to="/identities/keys">Keys &amp; identities</Link> and send a request to{' '}
          <code>/v1/chat/completions</code>.
        </EmptyState>
      ) : (
        <>
          <OverviewCharts answer={answer} />
          <TopTables answer={answer} />
        </>
      )}
      {answer.rejections && <RejectionsChart rejections={answer.rejections} />}
    </>
  );
}

function clock(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}
