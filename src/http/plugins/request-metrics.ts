/**
 * Counts every HTTP answer by route and status and observes its duration. Routes that write the
 * response themselves (streams) call `request.recordResponse(status)` when they finish.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../observability/metrics.ts';

declare module 'fastify' {
  interface FastifyRequest {
    recordResponse(status: number): void;
  }
}

export const requestMetricsPlugin = fp(
  async (app: FastifyInstance, options: { metrics: Metrics; logRequests: boolean }) => {
    const { metrics, logRequests } = options;
    function record(request: FastifyRequest, status: number, durationSeconds: number): void {
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.httpRequests.inc({ method: request.method, route, status });
      metrics.httpRequestDuration.observe({ method: request.method, route }, durationSeconds);
      if (logRequests) {
        request.log.info(
          { method: request.method, url: route, status, ms: Math.round(durationSeconds * 10_000) / 10 },
          'request completed',
        );
      }
    }
    app.decorateRequest('recordResponse', function (this: FastifyRequest, status: number) {
      record(this, status, (performance.now() - startedAt(this)) / 1000);
    });
    app.addHook('onRequest', async (request) => {
      (request as RequestWithStart)[startKey] = performance.now();
    });
    app.addHook('onResponse', async (request, reply) => {
      record(request, reply.statusCode, reply.elapsedTime / 1000);
    });
  },
  { name: 'switchboard-request-metrics' },
);

const startKey = Symbol('startedAt');
type RequestWithStart = FastifyRequest & { [startKey]?: number };

function startedAt(request: FastifyRequest): number {
  return (request as RequestWithStart)[startKey] ?? performance.now();
}
