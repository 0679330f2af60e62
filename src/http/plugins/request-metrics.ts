/**
 * The request lifecycle at the edge: echoes the request id in `x-request-id`, counts every HTTP answer
 * by route and status, observes its duration, and writes one access-log line. Routes that write the
 * response themselves (streams) call `reply.recordResponse(status)` when they finish, since a caller that
 * leaves mid-stream ends the response without Fastify's onResponse; each answer is recorded once. A
 * stream cut by a shutdown is logged as cut. Unmatched routes count as `unmatched` but log their path.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../observability/metrics.ts';

declare module 'fastify' {
  interface FastifyReply {
    recordResponse(status: number): void;
    /** Set once the answer has been counted and logged. */
    recorded: boolean;
  }
}

export const requestMetricsPlugin = fp(
  async (app: FastifyInstance, options: { metrics: Metrics; logRequests: boolean }) => {
    const { metrics, logRequests } = options;
    function record(reply: FastifyReply, status: number): void {
      if (reply.recorded) return;
      reply.recorded = true;
      const { request } = reply;
      const cut = (reply.raw as { cut?: boolean }).cut === true;
      const matched = request.routeOptions.url;
      const route = matched ?? 'unmatched';
      const seconds = reply.elapsedTime / 1000;
      metrics.httpRequests.inc(request.method, route, String(status));
      metrics.httpRequestDuration.observe({ method: request.method, route }, seconds);
      if (logRequests || cut) {
        // An unmatched path goes to the log (never a metric label), cut short so it cannot flood it.
        const url = matched ?? request.url.split('?')[0]!.slice(0, 200);
        const line = { method: request.method, url, status, ms: Math.round(seconds * 10_000) / 10 };
        if (cut) request.log.warn({ ...line, cut: true }, 'stream cut by shutdown');
        else request.log.info(line, 'request completed');
      }
    }
    app.decorateReply('recorded', false);
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
