/**
 * Text to speech through ElevenLabs' streaming endpoint (`POST /v1/text-to-speech/<voice>/stream`):
 * `input` becomes `text`, the deployment's model `model_id`, `speed` `voice_settings.speed`, and the
 * public `response_format` an `output_format` query value. The audio is passed on as it arrives; for
 * `wav` a header with placeholder sizes goes in front of the first PCM bytes (the route fixes the sizes).
 */
import type { SpeechRequest, SpeechResult } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';
import type { AttemptContext, SpeechCapability } from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import type { UpstreamError } from '../upstream-error.ts';
import { protocolError, withFirstChunkDeadline } from '../upstream-exchange.ts';
import type { ElevenLabsClient } from './elevenlabs-client.ts';
import { classifyElevenLabsError } from './elevenlabs-errors.ts';
import {
  type OutputFormat,
  outputFormatOf,
  SUPPORTED_FORMATS,
  WAV_HEADER_BYTES,
  wavHeader,
} from './speech-formats.ts';

/**
 * An ElevenLabs voice id (20 letters and digits today), with room for `_` and `-`. The id goes into
 * the upstream URL path, so nothing else may pass: `..` would survive percent-encoding.
 */
export const VOICE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class ElevenLabsSpeech implements SpeechCapability {
  private readonly client: ElevenLabsClient;
  /** `model_info.default_params.voice_id`: the voice when the caller names none. */
  private readonly defaultVoice: string | undefined;

  constructor(client: ElevenLabsClient) {
    this.client = client;
    const voice = client.settings.defaultParams?.voice_id;
    this.defaultVoice = typeof voice === 'string' && voice.length > 0 ? voice : undefined;
    // The config schema refuses such a voice at start; this guards settings built another way.
    if (this.defaultVoice !== undefined && !VOICE_ID.test(this.defaultVoice))
      throw new Error('model_info.default_params.voice_id is not an ElevenLabs voice id');
  }

  async speak(request: SpeechRequest, context: AttemptContext): Promise<SpeechResult> {
    const format = outputFormatOf(request.response_format);
    if (!format) throw unsupportedFormat(request.response_format);
    const callerVoice =
      typeof request.voice === 'string' && request.voice.length > 0 ? request.voice : undefined;
    if (callerVoice !== undefined && !VOICE_ID.test(callerVoice)) throw malformedVoice();
    const voice = callerVoice ?? this.defaultVoice;
    if (voice === undefined) throw missingVoice();
    const body: Record<string, unknown> = { text: request.input, model_id: request.model };
    if (request.speed !== undefined) body.voice_settings = { speed: request.speed };
    const response = await this.client.send(
      {
        operation: `text-to-speech/${encodeURIComponent(voice)}/stream?output_format=${format.outputFormat}`,
        contentType: 'application/json',
        accept: 'audio/*',
        body: JSON.stringify(body),
        streaming: true,
      },
      context,
    );
    if (response.status >= 400) {
      const error = await classifyElevenLabsError(response);
      // An unknown voice the caller named is the caller's mistake, not the deployment's.
      if (callerVoice !== undefined && isUnknownVoice(error)) throw unknownVoice();
      throw error;
    }
    if (!isAudio(response)) {
      response.cancel();
      throw protocolError('the upstream did not answer with audio');
    }
    const length = announcedLength(response);
    return {
      contentType: format.contentType,
      ...(length !== undefined ? { contentLength: format.wav ? length + WAV_HEADER_BYTES : length } : {}),
      audio: this.audio(response, format, context),
      units: { characters: [...request.input].length },
    };
  }

  private async *audio(
    response: UpstreamResponse,
    format: OutputFormat,
    context: AttemptContext,
  ): AsyncGenerator<Buffer> {
    // The header rides with the first upstream bytes, so nothing is sent before the upstream answered.
    let header: Buffer | undefined = format.wav ? wavHeader() : undefined;
    try {
      const chunks = withFirstChunkDeadline(
        response,
        this.client.settings,
        context,
        response.body,
        (chunk) => chunk.length > 0,
      );
      for await (const chunk of chunks) {
        if (chunk.length === 0) continue;
        yield header ? Buffer.concat([header, chunk]) : chunk;
        header = undefined;
      }
    } finally {
      response.cancel();
    }
  }
}

function missingVoice(): GatewayError {
  return errors.invalidRequest(
    "voice is required: this deployment has no default voice (model_info.default_params.voice_id); pass an ElevenLabs voice id as 'voice'",
    'voice',
  );
}

/**
 * ElevenLabs' voice_not_found (whatever the status), or a 404 whose code, if any, is about a voice: the
 * voice in the path is the only thing of the caller's a 404 can point at (a 404 naming the model or
 * another resource stays the deployment's).
 */
function isUnknownVoice(error: UpstreamError): boolean {
  const code = error.providerCode;
  if (code === 'voice_not_found') return true;
  return error.status === 404 && (code === undefined || code.includes('voice'));
}

function malformedVoice(): GatewayError {
  return errors.invalidRequest(
    "voice: must be an ElevenLabs voice id (1 to 64 letters, digits, _ or -), or left out to use the deployment's default voice",
    'voice',
  );
}

function unknownVoice(): GatewayError {
  return errors.invalidRequest(
    "The provider has no voice with this id: pass an ElevenLabs voice id as 'voice', or leave it out to use the deployment's default voice",
    'voice',
  );
}

function unsupportedFormat(format: string): GatewayError {
  return errors.invalidRequest(
    `response_format '${format}' is not available from ElevenLabs; use one of ${SUPPORTED_FORMATS.join(', ')}`,
    'response_format',
  );
}

/** Audio of some kind (or an unlabelled byte stream); JSON, HTML or text answers are not audio. */
function isAudio(response: UpstreamResponse): boolean {
  const type = String(response.headers['content-type'] ?? '').toLowerCase();
  return !/json|text\/|html|xml/.test(type);
}

function announcedLength(response: UpstreamResponse): number | undefined {
  const value = response.headers['content-length'];
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
