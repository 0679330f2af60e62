/** Liveness, readiness and the combined /health (no application authentication, as the spec says). */
import Type from 'typebox';
import type { App, AppDependencies } from '../app-types.ts';

const ReadinessBody = Type.Object({
  status: Type.String({ description: '`ok` when ready, `degraded` otherwise.' }),
  checks: Type.Record(Type.String(), Type.Boolean()),
  details: Type.Record(Type.String(), Type.Object({ state: Type.String() }, { additionalProperties: true })),
});

export function registerHealthRoutes(app: App, deps: Pick<AppDependencies, 'readiness'>): void {
  const liveliness = {
    schema: {
      tags: ['health'],
      summary: 'Liveness: 200 while the process serves HTTP (no dependency I/O).',
      response: { 200: Type.Object({ status: Type.Literal('ok') }) },
    },
  };
  app.get('/health/liveliness', liveliness, async () => ({ status: 'ok' as const }));
  app.get('/health/liveness', { ...liveliness, schema: { ...liveliness.schema, hide: true } }, async () => ({
    status: 'ok' as const,
  }));

  app.get(
    '/health/readiness',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: 200 when every configured critical check is ready, 503 otherwise.',
        response: { 200: ReadinessBody, 503: ReadinessBody },
      },
    },
    async (_request, reply) => {
      const report = await deps.readiness.report();
      return reply.code(report.status === 'ok' ? 200 : 503).send(report);
    },
  );

  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Coarse liveness plus the full readiness payload; the status follows readiness.',
        response: {
          200: Type.Object({ alive: Type.Boolean(), ...ReadinessBody.properties }),
          503: Type.Object({ alive: Type.Boolean(), ...ReadinessBody.properties }),
        },
      },
    },
    async (_request, reply) => {
      const report = await deps.readiness.report();
      return reply.code(report.status === 'ok' ? 200 : 503).send({ alive: true, ...report });
    },
  );
}
