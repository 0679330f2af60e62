/** GET /health/deployments and GET /health/fallback-events (internal; no application auth). */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import { deploymentReport } from '../../routing/deployment-report.ts';
import { MAX_FALLBACK_EVENTS } from '../../routing/fallback-events.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { errorResponses } from '../schemas/common-schemas.ts';

export function registerRoutingDiagnosticsRoutes(app: App, deps: Pick<AppDependencies, 'routing'>): void {
  app.get(
    '/health/deployments',
    {
      schema: {
        tags: ['health'],
        summary:
          'Routing health per model group and deployment (cooldowns, in-flight, latency, failures, usage).',
        querystring: Type.Object({ model: Type.Optional(Type.String({ minLength: 1 })) }),
        response: errorResponses,
      },
    },
    async (request) => {
      const { model } = request.query;
      if (model !== undefined && !deps.routing.registry.group(model)) throw errors.modelNotFound(model);
      return (await deploymentReport(deps.routing, model)) as never;
    },
  );

  app.get(
    '/health/fallback-events',
    {
      schema: {
        tags: ['health'],
        summary: 'Recent sanitized routing and failover events of this process, newest first.',
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FALLBACK_EVENTS, default: 50 })),
        }),
        response: errorResponses,
      },
    },
    async (request) =>
      ({ object: 'list', data: deps.routing.events.recent(request.query.limit ?? 50) }) as never,
  );
}
