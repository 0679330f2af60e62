/**
 * The shared answer step of every text route (chat, completions, responses, messages): hand the decoded
 * canonical request to the text pipeline, then write the wire format's JSON or event stream with the
 * routing and rate-limit headers. Route files keep only their schema, decoder and encoders.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type { TextEndpoint, TextPipeline } from '../proxy/text-pipeline.ts';
import type { App } from './app-types.ts';
import { callerSignal } from './caller-signal.ts';
import { writeEventStream } from './event-stream.ts';

export interface TextWireFormat {
  endpoint: TextEndpoint;
  /**
   * The answer as this format's JSON text (`json` is the chat-completions text, `native` the upstream's
   * answer when the request went up in this format, each when at hand).
   */
  encodeJson(response: ChatCompletion, json: string | undefined, native: string | undefined): string;
  /** The answer as this format's SSE events, ending with its terminal marker or an in-band error. */
  encodeStream(chunks: AsyncIterable<StreamChunk>): AsyncIterable<string>;
  /** The event that ends a stream a shutdown cuts (an error in this format, no terminal marker). */
  cutEvent: string;
}

export async function answerText(
  app: App,
  pipeline: TextPipeline,
  request: FastifyRequest,
  reply: FastifyReply,
  chatRequest: ChatRequest,
  format: TextWireFormat,
): Promise<FastifyReply> {
  const signal = callerSignal(reply);
  const bodyBytes = Number(request.headers['content-length'] ?? 0) || JSON.stringify(request.body).length;
  const outcome = await pipeline.run(
    chatRequest,
    { bodyBytes, caller: request.caller, headers: request.headers, signal, requestId: request.id },
    format.endpoint,
  );
  const headers = {
    ...outcome.headers,
    'x-request-id': request.id,
    'x-switchboard-deployment': outcome.deploymentId,
    'x-switchboard-attempts': String(outcome.attempts),
  };
  if (outcome.kind === 'json') {
    return reply
      .headers(headers)
      .type('application/json')
      .send(format.encodeJson(outcome.response, outcome.json, outcome.native));
  }
  await writeEventStream(reply, headers, format.encodeStream(outcome.chunks), signal, {
    streams: app.openStreams,
    cutEvent: format.cutEvent,
  });
  reply.recordResponse(200);
  return reply;
}
