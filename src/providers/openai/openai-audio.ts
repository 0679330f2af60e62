/**
 * Speech and transcription on an OpenAI-style deployment (Azure under its deployment path).
 *
 * Speech posts the caller's JSON to `<base>/audio/speech` (with the deployment's
 * `model_info.default_params.voice_id` as `voice` when the caller sent none) and hands the binary answer
 * on as it arrives: its content type, its length when announced (a WAV header can then be fixed without
 * holding the audio), and the body under the stream timeouts, the request deadline bounding the first
 * bytes. Billed by the input's characters.
 *
 * Transcription sends the spooled upload and the caller's fields as multipart to
 * `<base>/audio/transcriptions`, asking for a JSON format that carries the billing whenever it can (see
 * openai-transcript.ts): `usage` (tokens, or seconds for duration-billed models) and verbose_json's
 * `duration`. Text answers must have a transcript's content type.
 */
import type {
  SpeechRequest,
  SpeechResult,
  TranscriptionFormat,
  TranscriptionRequest,
  TranscriptionResult,
} from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';
import { multipartBody } from '../multipart-body.ts';
import type { AttemptContext, SpeechCapability, TranscriptionCapability } from '../provider-adapter.ts';
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError } from '../upstream-error.ts';
import { MAX_RESPONSE_BYTES, protocolError, withFirstChunkDeadline } from '../upstream-exchange.ts';
import { classifyErrorResponse } from './openai-errors.ts';
import {
  readJsonTranscription,
  readTranscript,
  textContentType,
  upstreamFormat,
} from './openai-transcript.ts';
import type { OpenAiTransport } from './openai-transport.ts';

export class OpenAiSpeech implements SpeechCapability {
  private readonly transport: OpenAiTransport;
  /** `model_info.default_params.voice_id`: the voice when the caller names none. */
  private readonly defaultVoice: string | undefined;

  constructor(transport: OpenAiTransport) {
    this.transport = transport;
    const voice = transport.settings.defaultParams?.voice_id;
    this.defaultVoice = typeof voice === 'string' && voice.length > 0 ? voice : undefined;
  }

  async speak(request: SpeechRequest, context: AttemptContext): Promise<SpeechResult> {
    const voice =
      typeof request.voice === 'string' && request.voice.length > 0 ? request.voice : this.defaultVoice;
    // OpenAI requires a voice: refused here, as the caller's mistake, before anything is sent.
    if (voice === undefined) throw missingVoice();
    const response = await this.transport.send(
      'audio/speech',
      { contentType: 'application/json', body: JSON.stringify({ ...request, voice }) },
      'audio/*, application/octet-stream',
      context,
      true,
    );
    try {
      if (response.status >= 400) throw await classifyErrorResponse(response);
      const contentType = audioContentType(response.headers);
      const contentLength = Number(header(response.headers, 'content-length'));
      return {
        contentType,
        ...(Number.isSafeInteger(contentLength) && contentLength > 0 ? { contentLength } : {}),
        units: { characters: [...request.input].length },
        audio: this.audio(response, context),
      };
    } catch (error) {
      response.cancel();
      throw error;
    }
  }

  private async *audio(response: UpstreamResponse, context: AttemptContext): AsyncGenerator<Buffer> {
    try {
      yield* withFirstChunkDeadline(response, this.transport.settings, context, response.body);
    } finally {
      response.cancel();
    }
  }
}

export class OpenAiTranscription implements TranscriptionCapability {
  private readonly transport: OpenAiTransport;

  constructor(transport: OpenAiTransport) {
    this.transport = transport;
  }

  async transcribe(request: TranscriptionRequest, context: AttemptContext): Promise<TranscriptionResult> {
    const format = request.response_format;
    const asked = upstreamFormat(request.model, format);
    const fields: Array<[string, string]> = [
      ['model', request.model],
      ['response_format', asked],
    ];
    if (request.language !== undefined) fields.push(['language', request.language]);
    if (request.prompt !== undefined) fields.push(['prompt', request.prompt]);
    if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
    for (const [name, value] of request.extra) fields.push([name, value]);
    // Cues are written from segments: a caller's word-only granularity would leave none.
    if (asked === 'verbose_json' && format !== 'verbose_json') withSegments(fields);
    const body = await multipartBody(fields, { field: 'file', upload: request.file });
    const json = asked === 'json' || asked === 'verbose_json';
    const response = await this.transport.send(
      'audio/transcriptions',
      body,
      json ? 'application/json' : 'text/plain, text/vtt, application/x-subrip',
      context,
    );
    if (response.status >= 400) throw await classifyErrorResponse(response);
    // A text answer that is no transcript (a proxy's HTML page) is refused before its body is read.
    const contentType = json ? 'application/json' : textContentTypeOrCancel(response, format);
    let text: string;
    try {
      text = await response.text(MAX_RESPONSE_BYTES);
    } catch (error) {
      throw classifyTransportError(error);
    }
    if (asked !== format) return readTranscript(text);
    if (json) return readJsonTranscription(text);
    return { raw: { contentType, body: text } };
  }
}

function textContentTypeOrCancel(response: UpstreamResponse, format: TranscriptionFormat): string {
  try {
    return textContentType(response.headers, format);
  } catch (error) {
    response.cancel();
    throw error;
  }
}

/** Adds segment granularity when the caller asked only for other granularities. */
function withSegments(fields: Array<[string, string]>): void {
  const granularities = fields.filter(([name]) => name === 'timestamp_granularities[]');
  if (granularities.length > 0 && !granularities.some(([, value]) => value === 'segment'))
    fields.push(['timestamp_granularities[]', 'segment']);
}

function missingVoice(): GatewayError {
  return errors.invalidRequest(
    'voice: required; name a voice (alloy, ash, coral …), or give the deployment model_info.default_params.voice_id.',
    'voice',
  );
}

function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A media type safe to send on as a header: `type/subtype` with simple parameters. */
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+"-]+)*$/;

/** The audio's media type; an answer that is JSON or text, or encoded, is not audio. */
function audioContentType(headers: ResponseHeaders): string {
  const encoding = header(headers, 'content-encoding');
  if (encoding !== undefined && encoding !== 'identity')
    throw protocolError('the upstream encoded the audio (content-encoding)');
  const type = header(headers, 'content-type')?.trim() ?? '';
  if (/^(application\/json|text\/)/i.test(type))
    throw protocolError('the upstream did not answer with audio');
  return MEDIA_TYPE.test(type) ? type : 'application/octet-stream';
}
