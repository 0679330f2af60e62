/**
 * A deadline for reading a request body: a client that sends its body slowly (or stops halfway) gets
 * 408 once `body_read_timeout_seconds` has passed, instead of holding a connection and its memory for
 * ever (issue 9: Fastify's requestTimeout is 0, so authenticated slow bodies never timed out). One
 * timer per request that has a body, cleared as soon as the body has been read or the answer is sent.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../../lib/error-catalogue.ts';

declare module 'fastify' {
  interface FastifyRequest {
    bodyReadTimer: NodeJS.Timeout | null;
  }
}

export const bodyReadDeadlinePlugin = fp(
  async (app: FastifyInstance, options: { timeoutMs: number }) => {
    const { timeoutMs } = options;
    app.decorateRequest('bodyReadTimer', null);
    const clear = async (request: FastifyRequest) => {
      if (request.bodyReadTimer === null) return;
      clearTimeout(request.bodyReadTimer);
      request.bodyReadTimer = null;
    };
    app.addHook('preParsing', async (request, _reply, payload) => {
      const { headers } = request;
      const hasBody =
        headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
      if (!hasBody) return payload;
      // The error goes to Fastify's body reader, which answers with it; the socket stays up for the 408
      // (sent with `connection: close`), where destroying the stream would drop the answer too.
      request.bodyReadTimer = setTimeout(() => {
        request.bodyReadTimer = null;
        // Only while Fastify's body reader listens: an answered request cleared its timer on response.
        if (!payload.readableEnded && payload.listenerCount('error') > 0)
          payload.emit('error', errors.bodyReadTimeout(timeoutMs));
      }, timeoutMs);
      payload.once('end', () => void clear(request));
      return payload;
    });
    // A body that is never read (the request was answered first, e.g. 401) must not keep its timer.
    app.addHook('onResponse', clear);
  },
  { name: 'switchboard-body-read-deadline' },
);
