/**
 * POST /v1/audio/speech: validate, hand to the modality pipeline, and stream the audio to the caller as
 * it arrives, with the upstream's content type (or the format's) and the routing headers (the pipeline
 * fixes a WAV header's sizes, spec rule 7). A failure before the first bytes is an ordinary error
 * answer; once bytes were sent, a failure destroys the response, so the caller sees an incomplete body,
 * never a complete-looking 200.
 */
import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { SPEECH_FORMATS, type SpeechFormat } from '../../canonical/modalities.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeSpeechRequest, SPEECH_CONTENT_TYPES } from '../../wire/audio/decode-speech-request.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { answerHeaders, jsonRequestContext } from '../modality-route.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';

/** The documented fields; the decoder checks them and keeps every other field for the upstream. */
const SpeechBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.String({ description: 'The text to speak: 1 to 4096 characters.' }),
    voice: Type.Optional(Type.String({ description: 'The voice (OpenAI: alloy, ash, coral …).' })),
    response_format: Type.Optional(
      Type.String({ description: `One of ${SPEECH_FORMATS.join(', ')} (default mp3).` }),
    ),
    speed: Type.Optional(Type.Number({ description: 'From 0.25 to 4.0 (default 1).' })),
    instructions: Type.Optional(Type.String({ description: 'How to speak (gpt-4o-mini-tts).' })),
  },
  { additionalProperties: true },
);

export function registerSpeechRoute(app: App, deps: Pick<AppDependencies, 'modalities'>): void {
  // LiteLLM also serves its OpenAI routes without the /v1 prefix; clients configured for it keep working.
  for (const url of ['/v1/audio/speech', '/audio/speech']) {
    app.post(
      url,
      {
        onRequest: app.authenticateCaller,
        schema: {
          tags: ['proxy'],
          security: callerSecurity,
          summary:
            'Speak a text: binary audio streamed as it is made (groups with model_info.mode: audio_speech).',
          body: SpeechBody,
        },
      },
      async (request, reply) => {
        const speech = decodeSpeechRequest(request.body);
        const context = jsonRequestContext(request, reply);
        const outcome = await deps.modalities.speak(speech, context);
        const { contentType, contentLength } = outcome.value;
        const headers: Record<string, string> = {
          ...answerHeaders(request, outcome),
          'content-type': audioType(contentType, speech.response_format),
          'cache-control': 'no-store',
        };
        // The rewrite keeps the length, so an announced length holds for the caller too (a cut body is short).
        if (contentLength !== undefined) headers['content-length'] = String(contentLength);
        await writeAudio(reply, headers, outcome.audio, context.signal);
        return reply;
      },
    );
  }
}

/** The upstream's media type, or the format's when the upstream sent none that says more. */
function audioType(upstream: string, format: SpeechFormat): string {
  return upstream === 'application/octet-stream' ? SPEECH_CONTENT_TYPES[format] : upstream;
}

/**
 * Writes the audio with back-pressure: headers once the first bytes are at hand (a failure before them
 * is answered as an error by the caller of this function), each chunk as it arrives, waiting for
 * 'drain' when the caller reads slowly. A caller who leaves stops the upstream (the signal) and frees
 * the request's slot (the iterator is returned).
 */
async function writeAudio(
  reply: FastifyReply,
  headers: Readonly<Record<string, string>>,
  audio: AsyncIterable<Buffer>,
  signal: AbortSignal,
): Promise<void> {
  const iterator = audio[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await iterator.next();
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, { ...headers, 'x-accel-buffering': 'no' });
  // A shutdown whose grace period ends destroys the body (no in-band error exists for audio).
  reply.server.openStreams.add(response, null);
  let status = 200;
  try {
    for (let next = first; !next.done; next = await iterator.next()) {
      if (response.destroyed) break;
      if (!response.write(next.value)) await once(response, 'drain', { signal });
    }
    if (response.destroyed) status = 499;
    else response.end();
  } catch (error) {
    status = signal.aborted ? 499 : error instanceof GatewayError ? error.status : 502;
    if (status !== 499)
      reply.request.log.warn({ err: error }, 'speech audio broke off after its first bytes');
    // Ending normally would look complete: the socket is destroyed so the caller sees a cut body.
    response.destroy();
  } finally {
    reply.server.openStreams.delete(response);
    await iterator.return?.();
    // Cut by a shutdown: logged as the 200 it answered, marked cut (as event streams are).
    reply.recordResponse((response as { cut?: boolean }).cut ? 200 : status);
  }
}
