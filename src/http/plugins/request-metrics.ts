/**
 * The request lifecycle at the edge: echoes the request id in `x-request-id`, counts every HTTP answer
 * by route and status, observes its duration, and writes one access-log line. Routes that write the
 * response themselves (streams) call `reply.recordResponse(status)` when they finish.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../observability/metrics.ts';

declare module 'fastify' {
  interface FastifyReply {
    recordResponse(status: number): void;
  }
}

export const requestMetricsPlugin = fp(
  async (app: FastifyInstance, options: { metrics: Metrics; logRequests: boolean }) => {
    const { metrics, logRequests } = options;
    function record(reply: FastifyReply, status: number): void {
      const { request } = reply;
      const route = request.routeOptions.url ?? 'unmatched';
      const seconds = reply.elapsedTime / 1000;
      metrics.httpRequests.inc(request.method, route, String(status));
      metrics.httpRequestDuration.observe({ method: request.method, route }, seconds);
      if (logRequests) {
        request.log.info(
          { method: request.method, url: route, status, ms: Math.round(seconds * 10_000) / 10 },
          'request completed',
        );
      }
    }
    app.decorateReply('recordResponse', function (this: FastifyReply, status: number) {
      record(this, status);
    });
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    app.addHook('onResponse', async (_request, reply) => {
      record(reply, reply.statusCode);
    });
  },
  { name: 'switchboard-request-metrics' },
);
