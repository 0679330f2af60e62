/**
 * What the gateway's readiness reports: a probe per dependency (the database server, the pool the
 * gateway's queries use, Redis when configured, the spend pipeline's), and which of them gate
 * readiness in which mode (docs/operations.md, Health and readiness).
 */
import type { SpendAccountingParts } from './accounting/spend-accounting.ts';
import type { Config } from './config/config.ts';
import type { ReadinessOptions, ReadinessProbe } from './observability/readiness.ts';
import type { Database } from './store/db/create-database.ts';
import type { SharedStore } from './store/shared/shared-store.ts';

export function readinessProbes(
  database: Database,
  store: SharedStore,
  spend: Pick<SpendAccountingParts, 'probes'>,
): ReadinessProbe[] {
  const probes: ReadinessProbe[] = [
    // The server, on a connection kept for health checks: up or down whatever the pool's load.
    { name: 'database', check: (signal) => database.pingServer(signal) },
    // The pool requests and admin calls take connections from: fails when it has none to spare.
    { name: 'foreground_database', check: (signal) => database.ping(signal) },
  ];
  if (store.kind === 'redis') probes.push({ name: 'redis', check: () => store.ping() });
  probes.push(...spend.probes);
  return probes;
}

/** Which checks gate readiness, and which are reported without gating it. */
export function readinessGates(config: Config): Pick<ReadinessOptions, 'required' | 'informational'> {
  const general = config.general_settings;
  const database = ['database', 'foreground_database'];
  const required: string[] = [];
  const informational: string[] = [];
  // allow_requests_on_db_unavailable: every replica still answers cached keys while the database is
  // down, so a load balancer must not take them all out; the checks still say it is down.
  (general.allow_requests_on_db_unavailable ? informational : required).push(...database);
  // Under fail_open every process still answers while Redis is down (per-process counters).
  if (general.redis_url)
    (general.redis_degraded_mode === 'fail_open' ? informational : required).push('redis');
  // Outbox mode promises durable spend: readiness needs its database and a live settlement worker,
  // in every mode (an answer cannot be delivered without its committed charge).
  if (general.spend_ingestion_mode === 'outbox')
    required.push('telemetry_database', 'telemetry_worker_database');
  return { required, informational };
}
