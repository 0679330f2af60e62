/** The newest fallback events of this replica: which request moved from where to where, and why. */
import type { FallbackEventView } from '../../api/console-types.ts';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { formatTime } from '../../components/format.ts';
import { EmptyState } from '../../components/query-state.tsx';

function origin(event: FallbackEventView): string {
  return event.from_deployment ? `${event.model} (${event.from_deployment})` : event.model;
}

function destination(event: FallbackEventView): string {
  const model = event.to_model ?? event.model;
  if (event.to_deployment) return `${model} (${event.to_deployment})`;
  return event.to_model ? model : 'none (gave up)';
}

const columns: Column<FallbackEventView>[] = [
  { header: 'Time', cell: (event) => formatTime(event.timestamp) },
  // Organization administrators get no request ids (they may name another organization's requests).
  { header: 'Request', cell: (event) => (event.request_id ? <code>{event.request_id}</code> : '—') },
  { header: 'From → to', cell: (event) => `${origin(event)} → ${destination(event)}` },
  { header: 'Reason', cell: (event) => event.reason },
  { header: 'Attempt', cell: (event) => event.attempt, numeric: true },
];

export function FallbackEvents(props: { events: FallbackEventView[] }) {
  return (
    <section aria-labelledby="fallback-events">
      <h2 id="fallback-events">Recent fallback events</h2>
      {props.events.length === 0 ? (
        <EmptyState title="No fallback events">
          Every recent request was answered by the first deployment tried on this replica.
        </EmptyState>
      ) : (
        <DataTable
          caption="Fallback events"
          columns={columns}
          rows={props.events}
          rowKey={(event) =>
            `${event.request_id ?? event.from_deployment ?? ''}-${event.model}-${event.attempt}-${event.timestamp}`
          }
        />
      )}
    </section>
  );
}
