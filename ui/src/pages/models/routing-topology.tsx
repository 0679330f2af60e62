/** Counts of groups and deployments, the router's settings and its fallback chains. */
import type { DeploymentsAnswer } from '../../api/console-types.ts';
import { formatCount } from '../../components/format.ts';

export function DeploymentCounts(props: { counts: DeploymentsAnswer['counts'] }) {
  const { counts } = props;
  const cards = [
    { id: 'groups', label: 'Model groups', value: counts.model_groups },
    { id: 'deployments', label: 'Deployments', value: counts.deployments },
    { id: 'healthy', label: 'Healthy', value: counts.healthy },
    { id: 'cooling', label: 'Cooling down', value: counts.cooling_down },
  ];
  return (
    <div className="grid count-grid">
      {cards.map((card) => (
        <section key={card.label} className="card count-card" aria-labelledby={`count-${card.id}`}>
          <h2 className="stat-label" id={`count-${card.id}`}>
            {card.label}
          </h2>
          <p className="stat">{formatCount(card.value)}</p>
        </section>
      ))}
    </div>
  );
}

/** A fallback list as chains ("gpt-4o → gpt-4o-mini → claude"), from `[{group: [other, …]}]`. */
export function fallbackChains(value: unknown): string[] | null {
  if (value === null || value === undefined) return [];
  const entries: Array<[string, unknown]> = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
      entries.push(...Object.entries(item));
    }
  } else if (typeof value === 'object') {
    entries.push(...Object.entries(value));
  } else {
    return null;
  }
  const chains: string[] = [];
  for (const [group, targets] of entries) {
    if (!Array.isArray(targets) || !targets.every((target) => typeof target === 'string')) return null;
    chains.push([group, ...targets].join(' → '));
  }
  return chains;
}

function FallbackList(props: { title: string; value: unknown }) {
  const chains = fallbackChains(props.value);
  return (
    <div>
      <dt>{props.title}</dt>
      <dd>
        {chains === null ? (
          <pre>{JSON.stringify(props.value, null, 2)}</pre>
        ) : chains.length === 0 ? (
          'None'
        ) : (
          <ul className="chain-list">
            {chains.map((chain) => (
              <li key={chain}>{chain}</li>
            ))}
          </ul>
        )}
      </dd>
    </div>
  );
}

export function RoutingTopology(props: { topology: DeploymentsAnswer['topology'] }) {
  const { topology } = props;
  const yesNo = (value: boolean) => (value ? 'Yes' : 'No');
  return (
    <section className="card topology" aria-labelledby="routing-topology">
      <h2 id="routing-topology">Routing</h2>
      <dl className="settings-list">
        <div>
          <dt>Strategy</dt>
          <dd>{topology.routing_strategy}</dd>
        </div>
        <div>
          <dt>Retries</dt>
          <dd>{formatCount(topology.num_retries)}</dd>
        </div>
        <div>
          <dt>Allowed fails before cooldown</dt>
          <dd>{formatCount(topology.allowed_fails)}</dd>
        </div>
        <div>
          <dt>Cooldown</dt>
          <dd>{formatCount(topology.cooldown_time)} s</dd>
        </div>
        <div>
          <dt>Pre-call checks (deployment limits)</dt>
          <dd>{yesNo(topology.enable_pre_call_checks)}</dd>
        </div>
        <div>
          <dt>Minute usage counted per deployment</dt>
          <dd>{yesNo(topology.usage_tracked)}</dd>
        </div>
        <FallbackList title="Fallbacks" value={topology.fallbacks} />
        <FallbackList title="Context-window fallbacks" value={topology.context_window_fallbacks} />
      </dl>
    </section>
  );
}
