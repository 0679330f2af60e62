/**
 * What the gateway's readiness reports: a probe per dependency (the database through both names the
 * spec asks for, Redis when configured, the spend pipeline's), and which of them gate readiness.
 */
import type { SpendAccountingParts } from './accounting/spend-accounting.ts';
import type { Config } from './config/config.ts';
import type { ReadinessProbe } from './observability/readiness.ts';
import type { Database } from './store/db/create-database.ts';
import type { SharedStore } from './store/shared/shared-store.ts';

export function readinessProbes(
  database: Database,
  store: SharedStore,
  spend: SpendAccountingParts,
): ReadinessProbe[] {
  const probes: ReadinessProbe[] = [
    { name: 'database', check: () => database.ping() },
    // The request path and the admin path share one pool here; both names are reported as the spec asks.
    { name: 'foreground_database', check: () => database.ping() },
  ];
  if (store.kind === 'redis') probes.push({ name: 'redis', check: () => store.ping() });
  probes.push(...spend.probes);
  return probes;
}

export function requiredChecks(config: Config): string[] {
  const checks = ['database', 'foreground_database'];
  if (config.general_settings.redis_url) checks.push('redis');
  // Outbox mode promises durable spend: readiness needs its database and a live settlement worker.
  if (config.general_settings.spend_ingestion_mode === 'outbox')
    checks.push('telemetry_database', 'telemetry_worker_database');
  return checks;
}
