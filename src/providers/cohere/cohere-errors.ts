/**
 * Cohere error answers (`{"id", "message"}`: no code, and a message that may echo the request) are
 * classified from the status and Retry-After alone; the body is never read, so nothing of it can reach
 * the caller or the logs. Also the protocol error of an answer that is not the v2 shape.
 */
import type { UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, type UpstreamError } from '../upstream-error.ts';
import { protocolError } from '../upstream-exchange.ts';

export function classifyCohereError(response: UpstreamResponse): UpstreamError {
  response.cancel();
  return classifyStatus(response.status, response.headers);
}

export function notCohereAnswer(operation: 'embed' | 'rerank'): UpstreamError {
  return protocolError(`the upstream answer is not a Cohere v2 ${operation} response`);
}
