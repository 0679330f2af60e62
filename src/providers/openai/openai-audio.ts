/**
 * Speech and transcription on an OpenAI-style deployment (Azure under its deployment path).
 *
 * Speech posts the caller's JSON to `<base>/audio/speech` and hands the binary answer on as it arrives:
 * its content type, its length when announced (a WAV header can then be fixed without holding the
 * audio), and the body under the stream timeouts, the request deadline bounding the first bytes. Billed
 * by the input's characters.
 *
 * Transcription sends the spooled upload and the caller's fields as multipart to
 * `<base>/audio/transcriptions` with the caller's response_format, so the answer goes back as it came.
 * JSON answers are checked and read for billing: `usage` (tokens, or seconds for duration-billed
 * models) and verbose_json's `duration`.
 */
import type {
  SpeechRequest,
  SpeechResult,
  TranscriptionFormat,
  TranscriptionRequest,
  TranscriptionResult,
} from '../../canonical/modalities.ts';
import type { Usage } from '../../canonical/usage.ts';
import { multipartBody } from '../multipart-body.ts';
import type { AttemptContext, SpeechCapability, TranscriptionCapability } from '../provider-adapter.ts';
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError } from '../upstream-error.ts';
import { MAX_RESPONSE_BYTES, protocolError, withFirstChunkDeadline } from '../upstream-exchange.ts';
import { classifyErrorResponse } from './openai-errors.ts';
import type { OpenAiTransport } from './openai-transport.ts';

export class OpenAiSpeech implements SpeechCapability {
  private readonly transport: OpenAiTransport;

  constructor(transport: OpenAiTransport) {
    this.transport = transport;
  }

  async speak(request: SpeechRequest, context: AttemptContext): Promise<SpeechResult> {
    const response = await this.transport.send(
      'audio/speech',
      { contentType: 'application/json', body: JSON.stringify(request) },
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
    const fields: Array<[string, string]> = [
      ['model', request.model],
      ['response_format', request.response_format],
    ];
    if (request.language !== undefined) fields.push(['language', request.language]);
    if (request.prompt !== undefined) fields.push(['prompt', request.prompt]);
    if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
    for (const [name, value] of request.extra) fields.push([name, value]);
    const body = await multipartBody(fields, { field: 'file', upload: request.file });
    const response = await this.transport.send(
      'audio/transcriptions',
      body,
      'application/json, text/plain, text/vtt',
      context,
    );
    if (response.status >= 400) throw await classifyErrorResponse(response);
    let text: string;
    try {
      text = await response.text(MAX_RESPONSE_BYTES);
    } catch (error) {
      throw classifyTransportError(error);
    }
    const format = request.response_format;
    if (format === 'json' || format === 'verbose_json') return readJsonTranscription(text);
    return { raw: { contentType: textContentType(response.headers, format), body: text } };
  }
}

/** A json or verbose_json answer, checked, with what it says about billing. */
export function readJsonTranscription(text: string): TranscriptionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw protocolError('the upstream transcription is not JSON');
  }
  const answer = parsed as { text?: unknown; duration?: unknown; usage?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || typeof answer.text !== 'string')
    throw protocolError('the upstream transcription has no text');
  const result: TranscriptionResult = { raw: { contentType: 'application/json', body: text } };
  const usage = answer.usage as Record<string, unknown> | undefined;
  const tokens = tokenUsage(usage);
  if (tokens) result.usage = tokens;
  const seconds = isSeconds(answer.duration)
    ? answer.duration
    : usage?.type === 'duration' && isSeconds(usage.seconds)
      ? usage.seconds
      : undefined;
  if (seconds !== undefined) result.units = { audioSeconds: seconds };
  return result;
}

/** gpt-4o-transcribe's `usage` of type tokens as prompt (audio and text) and completion tokens. */
function tokenUsage(usage: Record<string, unknown> | undefined): Usage | undefined {
  if (usage?.type !== 'tokens') return undefined;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = usage;
  if (!isCount(input) || !isCount(output)) return undefined;
  const details = usage.input_token_details;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: isCount(total) ? total : input + output,
    ...(details !== null && typeof details === 'object'
      ? { prompt_tokens_details: { ...(details as Record<string, unknown>) } }
      : {}),
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
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

function textContentType(headers: ResponseHeaders, format: TranscriptionFormat): string {
  const type = header(headers, 'content-type')?.trim() ?? '';
  if (/^text\//i.test(type) && MEDIA_TYPE.test(type)) return type;
  return format === 'vtt' ? 'text/vtt; charset=utf-8' : 'text/plain; charset=utf-8';
}
