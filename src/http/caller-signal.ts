/**
 * The root AbortSignal of a proxied request: it aborts when the caller's connection closes before the
 * answer was written, so every upstream call made for the caller stops with it.
 */
import type { FastifyReply } from 'fastify';

export function callerSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
}
