/** GET /metrics in the Prometheus text exposition format. */
import type { App, AppDependencies } from '../app-types.ts';

export function registerMetricsRoute(app: App, deps: Pick<AppDependencies, 'metrics'>): void {
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['health'],
        summary: 'Metrics in the Prometheus text format.',
        produces: ['text/plain'],
      },
    },
    async (_request, reply) => {
      const text = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(text);
    },
  );
}
