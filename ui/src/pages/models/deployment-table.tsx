/** One model group's deployments: health, cooldown, live load and utilisation against their limits. */
import { useId } from 'react';
import type { DeploymentView, ModelGroupView } from '../../api/console-types.ts';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { formatCount, formatMs, formatTime } from '../../components/format.ts';

export function DeploymentStatus(props: { deployment: DeploymentView }) {
  const { deployment } = props;
  if (deployment.cooling_down_until !== null)
    return (
      <span className="badge badge-warn">Cooling down until {formatTime(deployment.cooling_down_until)}</span>
    );
  if (!deployment.healthy) return <span className="badge badge-danger">Unhealthy</span>;
  return <span className="badge badge-ok">Healthy</span>;
}

/** The deployment's limits as text ("60 rpm, 10,000 tpm"), or null when it has none. */
function limitsText(deployment: DeploymentView): string | null {
  const parts: string[] = [];
  if (deployment.rpm_limit !== null) parts.push(`${formatCount(deployment.rpm_limit)} rpm`);
  if (deployment.tpm_limit !== null) parts.push(`${formatCount(deployment.tpm_limit)} tpm`);
  return parts.length === 0 ? null : parts.join(', ');
}

/**
 * Use of this minute against the deployment's limits, as text ("12 of 60 rpm") with a meter of the
 * tighter one. Minute usage is counted only with pre-call checks or a usage-aware strategy: otherwise
 * the gateway reports zeros, so the limits are shown without a usage that would read as idle.
 */
export function Utilisation(props: { deployment: DeploymentView; usageTracked: boolean }) {
  const { deployment } = props;
  const limits = limitsText(deployment);
  if (limits === null) return <span className="muted">No limit</span>;
  if (!props.usageTracked) return <span>Limit {limits} (usage not counted)</span>;
  const parts: string[] = [];
  if (deployment.rpm_limit !== null)
    parts.push(
      `${formatCount(deployment.minute_usage.requests)} of ${formatCount(deployment.rpm_limit)} rpm`,
    );
  if (deployment.tpm_limit !== null)
    parts.push(`${formatCount(deployment.minute_usage.tokens)} of ${formatCount(deployment.tpm_limit)} tpm`);
  const text = parts.join(', ');
  const percent = Math.round(Math.min(1, Math.max(0, deployment.utilization)) * 100);
  return (
    <span className="utilisation">
      <meter
        min={0}
        max={1}
        low={0.7}
        high={0.9}
        optimum={0}
        value={deployment.utilization}
        aria-label={`Utilisation of ${deployment.id}`}
        aria-valuetext={`${percent}% (${text})`}
      />
      <span>{text}</span>
    </span>
  );
}

function deploymentColumns(usageTracked: boolean): Column<DeploymentView>[] {
  return [
    { header: 'Deployment', cell: (row) => <code>{row.id}</code> },
    { header: 'Provider', cell: (row) => row.provider },
    { header: 'Status', cell: (row) => <DeploymentStatus deployment={row} /> },
    { header: 'In flight', cell: (row) => formatCount(row.in_flight), numeric: true },
    { header: 'Latency', cell: (row) => formatMs(row.latency_ms), numeric: true },
    { header: 'TTFT', cell: (row) => formatMs(row.time_to_first_token_ms), numeric: true },
    { header: 'Recent failures', cell: (row) => formatCount(row.recent_failures), numeric: true },
    {
      header: 'Requests (ok / failed)',
      cell: (row) =>
        `${formatCount(row.requests)} (${formatCount(row.successes)} / ${formatCount(row.failures)})`,
      numeric: true,
    },
    { header: 'Weight', cell: (row) => formatCount(row.weight), numeric: true },
    {
      header: 'Utilisation',
      cell: (row) => <Utilisation deployment={row} usageTracked={usageTracked} />,
    },
  ];
}

export function ModelGroupSection(props: { group: ModelGroupView; usageTracked: boolean }) {
  const { group } = props;
  // Group names may hold any character ('openai/gpt-4o'): the id is generated, not derived.
  const headingId = useId();
  return (
    <section className="model-group" aria-labelledby={headingId}>
      <h2 id={headingId}>{group.model}</h2>
      <p className="model-group-summary">
        {group.healthy_deployments} of {group.total_deployments} deployments healthy. Serves:{' '}
        {group.endpoints.length === 0 ? (
          <span className="muted">no endpoint listed</span>
        ) : (
          <span className="badge-list">
            {group.endpoints.map((endpoint) => (
              <span key={endpoint} className="badge">
                {endpoint}
              </span>
            ))}
          </span>
        )}
      </p>
      <DataTable
        caption={`Deployments of ${group.model}`}
        columns={deploymentColumns(props.usageTracked)}
        rows={group.deployments}
        rowKey={(row) => row.id}
      />
    </section>
  );
}
