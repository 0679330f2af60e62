/**
 * The streams being written right now, so a shutdown whose grace period ran out can end each event
 * stream with one in-band error event (the caller's SDK raises it) instead of cutting the socket
 * mid-body (issue 9: cut streams had no error event and were logged as 200). A binary body (speech
 * audio) has no in-band error: it is destroyed, so the caller sees it incomplete, never complete.
 */
import type { ServerResponse } from 'node:http';

declare module 'fastify' {
  interface FastifyInstance {
    /** The event streams being written now (cut at the end of a shutdown's grace period). */
    openStreams: OpenStreams;
  }
}

export class OpenStreams {
  private readonly streams = new Map<ServerResponse, string | null>();

  /** Registers a stream and the event that ends it if it must be cut (null: a binary body, destroyed). */
  add(response: ServerResponse, cutEvent: string | null): void {
    this.streams.set(response, cutEvent);
  }

  delete(response: ServerResponse): void {
    this.streams.delete(response);
  }

  /** Ends every open stream with its cut event; returns how many were cut. */
  cutAll(): number {
    const streams = [...this.streams];
    this.streams.clear();
    for (const [response, cutEvent] of streams) {
      if (response.destroyed || response.writableEnded) continue;
      (response as ServerResponse & { cut?: boolean }).cut = true;
      if (cutEvent === null) response.destroy();
      else response.end(cutEvent);
    }
    return streams.length;
  }
}
