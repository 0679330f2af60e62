/** The Fastify instance type used by every route file, and the dependencies buildApp receives. */
import type {} from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ConsoleOverview } from '../accounting/console-overview.ts';
import type { SpendQueries } from '../accounting/spend-queries.ts';
import type { BatchFiles } from '../batch/batch-files.ts';
import type { Config } from '../config/config.ts';
import type { Authenticator } from '../identity/authenticator.ts';
import type { IdentityAdmin } from '../identity/identity-admin.ts';
import type { OrganizationOf } from '../identity/organization-of.ts';
import type { TierPolicyAdmin } from '../identity/tier-policy-admin.ts';
import type { Clock } from '../lib/clock.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';
import type { RejectionCounter } from '../limits/rejection-counter.ts';
import type { TierPolicies } from '../limits/tier-policies.ts';
import type { McpServices } from '../mcp/mcp-services.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Readiness } from '../observability/readiness.ts';
import type { ModalityPipeline } from '../proxy/modality-pipeline.ts';
import type { TextPipeline } from '../proxy/text-pipeline.ts';
import type { ReportSources } from '../routing/deployment-report.ts';
import type { FallbackEventLog } from '../routing/fallback-events.ts';
import type { ModelRegistry } from '../routing/model-registry.ts';
import type { AuditRepository } from '../store/db/repositories/audit-repository.ts';
import type { BatchRepository } from '../store/db/repositories/batch-repository.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface AppDependencies {
  config: Config;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  readiness: Readiness;
  authenticator: Authenticator;
  identityAdmin: IdentityAdmin;
  /** Which organization an administered thing belongs to (scoped administration). */
  organizationOf: OrganizationOf;
  /** The audit log's read side (GET /ui/api/audit). */
  audit: Pick<AuditRepository, 'list'>;
  registry: ModelRegistry;
  /** Admission of calls outside the pipelines (files, batches) against the caller's limits. */
  admission: Pick<CallerAdmission, 'admit'>;
  /** The pipeline behind every text endpoint. */
  text: TextPipeline;
  /** The pipeline behind the embeddings, images, audio and rerank endpoints. */
  modalities: ModalityPipeline;
  routing: ReportSources & { events: FallbackEventLog };
  mcp: McpServices;
  /** Where cached answers live, for the admin purge (DELETE /ui/api/cache). */
  responseCacheStore: Pick<SharedStore, 'cacheDelete'>;
  /** The admin read side of spend; without it the spend routes and view totals are left out. */
  spend?: SpendQueries;
  /** Tier policies: the admin use cases and the in-memory view admission reads. */
  tierPolicyAdmin: TierPolicyAdmin;
  tierPolicies: TierPolicies;
  /** Batch files (POST/GET/DELETE /v1/files); undefined while batches are disabled. */
  batchFiles?: BatchFiles | undefined;
  /** Batch rows (POST/GET /v1/batches); undefined while batches are disabled. */
  batches?: BatchRepository | undefined;
  /** The console overview's sources; without them GET /ui/api/console/overview is left out. */
  console?: { overview: ConsoleOverview; rejections: Pick<RejectionCounter, 'lastHour'> };
  /** Where the built console is (tests point it elsewhere); default ui/dist beside the sources. */
  consoleDistDir?: string;
  /** Which backends this replica uses (GET /ui/api/settings shows kinds, never URLs). */
  settingsBackends: { database: string; shared_store: string };
}
