/**
 * The root AbortSignal of a proxied request: it aborts when the caller's connection closes before the
 * answer was written, so every upstream call made for the caller stops with it, and when a shutdown
 * cut its stream (reason StreamCutByShutdown: that call stops at once, to be charged before the
 * process closes its databases).
 */
import type { FastifyReply } from 'fastify';
import { StreamCutByShutdown } from '../proxy/upstream-signal.ts';

export function callerSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  response.once('close', () => {
    if ((response as { cut?: boolean }).cut) controller.abort(new StreamCutByShutdown());
    else if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
}
