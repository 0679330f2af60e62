/**
 * Models and deployments: this replica's routing view (counts, router settings, each model group's
 * deployments and the recent fallback events), refreshed every 10 s.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import type { DeploymentsAnswer } from '../api/console-types.ts';
import { useSession } from '../auth/session.tsx';
import { formatTime } from '../components/format.ts';
import { PageHeader } from '../components/page-header.tsx';
import { PolledState } from '../components/polled-state.tsx';
import { EmptyState } from '../components/query-state.tsx';
import { ModelGroupSection } from './models/deployment-table.tsx';
import { FallbackEvents } from './models/fallback-events.tsx';
import { DeploymentCounts, RoutingTopology } from './models/routing-topology.tsx';
import './models/models.css';

export const DEPLOYMENTS_REFRESH_MS = 10_000;

export function ModelsPage() {
  const { api } = useSession();
  const query = useQuery({
    queryKey: ['console', 'deployments'],
    queryFn: () => api.get<DeploymentsAnswer>('/console/deployments'),
    refetchInterval: DEPLOYMENTS_REFRESH_MS,
  });
  // Only a refresh the operator asked for marks the button busy: the 10 s poll must not, or the button
  // would leave the keyboard focus every 10 s. Busy is aria-disabled, so the pressed button keeps focus.
  const refresh = useMutation({ mutationFn: () => query.refetch() });
  return (
    <>
      <PageHeader
        title="Models and deployments"
        description="Health, cooldowns and fallback events are what this gateway replica has seen: each replica routes on its own observations. Refreshed every 10 seconds."
        actions={
          <button
            type="button"
            aria-disabled={refresh.isPending || undefined}
            onClick={() => {
              if (!refresh.isPending) refresh.mutate();
            }}
          >
            {refresh.isPending ? 'Refreshing…' : 'Refresh'}
          </button>
        }
      />
      {query.dataUpdatedAt > 0 && <p className="muted">Updated {formatTime(query.dataUpdatedAt)}</p>}
      <PolledState query={query} what="deployments">
        {(data) => <DeploymentsView data={data} />}
      </PolledState>
    </>
  );
}

function DeploymentsView(props: { data: DeploymentsAnswer }) {
  const { data } = props;
  return (
    <>
      <DeploymentCounts counts={data.counts} />
      <RoutingTopology topology={data.topology} />
      {data.model_groups.length === 0 ? (
        <EmptyState title="No model groups configured">
          Add <code>model_list</code> entries to the gateway's config file (see docs/configuration.md), then
          restart the gateway.
        </EmptyState>
      ) : (
        data.model_groups.map((group) => (
          <ModelGroupSection key={group.model} group={group} usageTracked={data.topology.usage_tracked} />
        ))
      )}
      <FallbackEvents events={data.fallback_events} />
    </>
  );
}
