/**
 * Writes an SSE answer straight to the socket: headers once the first event is ready, each event as it
 * arrives, waiting for 'drain' when the caller reads slowly (back-pressure), and stopping as soon as the
 * caller disconnects. While it runs the stream is registered in `open`, so a shutdown can cut it with
 * `cutEvent` (the response is then marked `cut`).
 */
import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import type { OpenStreams } from './open-streams.ts';

export async function writeEventStream(
  reply: FastifyReply,
  headers: Readonly<Record<string, string>>,
  events: AsyncIterable<string>,
  signal: AbortSignal,
  open: { streams: OpenStreams; cutEvent: string },
): Promise<void> {
  reply.hijack();
  const response = reply.raw;
  open.streams.add(response, open.cutEvent);
  response.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  try {
    for await (const event of events) {
      if (response.destroyed || response.writableEnded) break;
      if (!response.write(event)) await once(response, 'drain', { signal });
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    open.streams.delete(response);
    if (!response.destroyed && !response.writableEnded) response.end();
  }
}
