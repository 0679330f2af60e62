/**
 * The console's summary API: GET /ui/api/session (who signed in), GET /ui/api/console/overview
 * (traffic, latency, spend and refusals over a window) and GET /ui/api/console/deployments (this
 * replica's routing health, the endpoints each group serves and recent fallback events).
 */
import { BATCH_ENDPOINTS } from '../../batch/batch-input-lines.ts';
import type { AdminActor } from '../../identity/authenticator.ts';
import { CAPABILITY_MODES, type Capability } from '../../providers/provider-adapter.ts';
import { deploymentReport } from '../../routing/deployment-report.ts';
import type { ModelGroup } from '../../routing/model-registry.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import {
  DeploymentsView,
  OverviewQuery,
  OverviewView,
  overviewView,
  SessionView,
  sessionView,
} from '../schemas/console-views.ts';

/** The public endpoints of each capability, by the short names the console shows. */
const ENDPOINTS_OF_CAPABILITY: Readonly<Record<Capability, readonly string[]>> = {
  chat: ['chat', 'completions', 'responses', 'messages'],
  embeddings: ['embeddings'],
  images: ['images'],
  speech: ['speech'],
  transcription: ['transcriptions'],
  rerank: ['rerank'],
};
/** The path a batch input line names for a capability (the batch worker accepts some of them). */
const BATCH_PATH_OF_CAPABILITY: Partial<Record<Capability, string>> = {
  chat: '/v1/chat/completions',
  embeddings: '/v1/embeddings',
};
const FALLBACK_EVENTS = 50;
const common = { tags: ['admin'], security: adminSecurity };

export function registerConsoleRoutes(
  app: App,
  deps: Pick<AppDependencies, 'console' | 'routing' | 'batches'>,
): void {
  registerSessionRoute(app);
  registerDeploymentsRoute(app, deps);
  if (deps.console) registerOverviewRoute(app, deps.console);
}

function registerSessionRoute(app: App): void {
  app.get(
    '/ui/api/session',
    {
      onRequest: app.authenticateAdmin,
      schema: {
        ...common,
        summary:
          'Who the bearer key belongs to: the master key, a proxy administrator or an organization administrator.',
        response: { 200: SessionView, ...errorResponses },
      },
    },
    async (request) => sessionView(request.adminActor),
  );
}

function registerDeploymentsRoute(app: App, deps: Pick<AppDependencies, 'routing' | 'batches'>): void {
  app.get(
    '/ui/api/console/deployments',
    {
      onRequest: app.authenticateAdmin,
      schema: {
        ...common,
        summary:
          "This replica's routing view: health and cooldowns per deployment, the endpoints each model group serves, and the newest fallback events (without request ids for organization administrators).",
        response: { 200: DeploymentsView, ...errorResponses },
      },
    },
    async (request) => {
      const report = await deploymentReport(deps.routing);
      const groups = new Map(deps.routing.registry.groups().map((group) => [group.name, group]));
      const events = deps.routing.events.recent(FALLBACK_EVENTS);
      return {
        ...report,
        model_groups: report.model_groups.map((view) => ({
          ...view,
          endpoints: endpointsOf(groups.get(view.model)!, deps.batches !== undefined),
        })),
        // A request id names a request of any organization: only the gateway's administrators see them.
        fallback_events: isOrgAdmin(request.adminActor)
          ? events.map(({ request_id: _, ...event }) => event)
          : events,
      };
    },
  );
}

function registerOverviewRoute(app: App, summaries: NonNullable<AppDependencies['console']>): void {
  app.get(
    '/ui/api/console/overview',
    {
      onRequest: app.authenticateAdmin,
      schema: {
        ...common,
        summary:
          'Requests, errors, approximate latency percentiles, tokens and spend per time bucket from the spend records (cached 30 s for 1h and 24h, 5 min for 7d and 30d), the top models, keys and teams, and rate-limit and budget refusals of the last hour across replicas.',
        querystring: OverviewQuery,
        response: { 200: OverviewView, ...errorResponses },
      },
    },
    async (request) => {
      const organizationId = request.query.organization_id;
      const [overview, rejections] = await Promise.all([
        summaries.overview.read({ window: request.query.window, organizationId }),
        // The spend figures come from the database: a Redis outage costs only the refusal counts.
        summaries.rejections.lastHour(organizationId).catch((error: unknown) => {
          request.log.warn({ err: error }, 'refusal counts unavailable for the console overview');
          return null;
        }),
      ]);
      return overviewView(overview, rejections, organizationId ?? null);
    },
  );
}

function isOrgAdmin(actor: AdminActor): boolean {
  return actor.kind === 'user' && actor.role === 'org_admin';
}

/** The same rule as request admission: a group serves the endpoints of the capability owning its mode. */
export function endpointsOf(group: ModelGroup, batchesEnabled: boolean): string[] {
  const capabilities = (Object.keys(CAPABILITY_MODES) as Capability[]).filter((capability) =>
    CAPABILITY_MODES[capability].includes(group.mode),
  );
  const endpoints = capabilities.flatMap((capability) => ENDPOINTS_OF_CAPABILITY[capability]);
  const batchable = capabilities.some((capability) =>
    (BATCH_ENDPOINTS as readonly string[]).includes(BATCH_PATH_OF_CAPABILITY[capability] ?? ''),
  );
  return batchesEnabled && batchable ? [...endpoints, 'batches'] : endpoints;
}
