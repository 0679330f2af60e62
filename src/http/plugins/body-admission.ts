/**
 * Which request bodies the gateway agrees to read. Keys are checked in onRequest, before any body byte
 * is read; a request answered before its body was read (an unknown or blocked key, a throttled
 * address, a refusal below) closes its connection instead of reading the body to the end, as Node
 * would to keep the connection alive (issue 25). Then each key's bodies in flight are bounded by
 * general_settings.max_concurrent_body_bytes_per_key: past it, 429 `key_body_bytes_exceeded` with
 * retry-after, before the body is read. The bytes are held from the headers until the body has been
 * read (or the answer is over), by the announced Content-Length, or max_request_body_bytes without one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../../lib/error-catalogue.ts';
import { KeyBodyBytes } from '../key-body-bytes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Request-body bytes each key is sending at once (read by tests and diagnostics). */
    keyBodyBytes: KeyBodyBytes;
  }
}

export interface BodyAdmissionOptions {
  /** general_settings.max_concurrent_body_bytes_per_key. */
  shareBytes: number;
  /** What a body without Content-Length (chunked) counts as: general_settings.max_request_body_bytes. */
  unknownLengthBytes: number;
}

export const bodyAdmissionPlugin = fp(
  async (app: FastifyInstance, options: BodyAdmissionOptions) => {
    const share = new KeyBodyBytes(options.shareBytes);
    app.decorate('keyBodyBytes', share);
    // A callback hook: it runs for every request with a body, and a promise per request is not free.
    app.addHook('preParsing', (request, reply, payload, done) => {
      const key = keyOf(request);
      if (key === null) return done(null, payload);
      const { headers } = request;
      const announced = headers['content-length'];
      const bytes =
        announced !== undefined
          ? Number(announced)
          : headers['transfer-encoding'] !== undefined
            ? options.unknownLengthBytes
            : 0;
      if (!(bytes > 0)) return done(null, payload);
      const held = share.reserve(key, bytes);
      if (held === 0) return done(errors.keyBodyBytesExceeded(options.shareBytes));
      // Whichever comes first gives the bytes back; plain listeners (no once wrappers) on short-lived objects.
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        share.release(key, held);
      };
      request.raw.on('end', release);
      reply.raw.on('close', release);
      done(null, payload);
    });
  },
  { name: 'switchboard-body-admission' },
);

/** Whose share a body counts against: the calling key (the master key is one key), or nobody's. */
function keyOf(request: FastifyRequest): string | null {
  const { caller, adminActor } = request;
  if (caller) return caller.keyId ?? 'master';
  if (adminActor) return adminActor.kind === 'master' ? 'master' : adminActor.keyId;
  return null;
}

/** An unread body up to this size is read and dropped, keeping the connection; a larger one closes it. */
const DRAINED_BODY_BYTES = 64 * 1024;

/**
 * Closes the connection of an answer sent before the request's large body was read, so the body is
 * never read: without it Node reads the whole unread body to keep the connection alive. A small body
 * (at most 64 KiB announced) is cheaper to drop than a new connection; a body being drained on purpose
 * (flowing: uploads/multipart-scope.ts discardRest) is left to its drain.
 */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.readableEnded || raw.readableFlowing === true) return;
  const { headers } = request;
  const announced = headers['content-length'];
  const large =
    announced === undefined
      ? headers['transfer-encoding'] !== undefined
      : Number(announced) > DRAINED_BODY_BYTES;
  if (large) reply.header('connection', 'close');
}
