/**
 * Decodes a POST /v1/audio/speech body into the canonical request: `model`, `input` (non-empty, at most
 * 4096 characters as OpenAI allows), `voice`, `response_format` (mp3 by default), `speed` from 0.25 to 4
 * and `instructions`. Unknown fields are kept for OpenAI-style upstreams. Refusals are 400s naming the
 * field. The media type of each format is here too, for answers whose upstream did not send one.
 */
import { SPEECH_FORMATS, type SpeechFormat, type SpeechRequest } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** OpenAI's bound on `input`, in characters (code points). */
export const MAX_SPEECH_INPUT_CHARACTERS = 4096;

export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

export function decodeSpeechRequest(body: unknown): SpeechRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The body must be a JSON object with model, input and voice.');
  const request = body as Record<string, unknown>;
  const model = request.model;
  if (typeof model !== 'string' || model.trim() === '' || model.includes('\0'))
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  const input = request.input;
  if (typeof input !== 'string' || input.trim() === '')
    throw errors.invalidRequest('input: must be a non-empty string, the text to speak.', 'input');
  if (characterCount(input) > MAX_SPEECH_INPUT_CHARACTERS)
    throw errors.invalidRequest(
      `input: must be at most ${MAX_SPEECH_INPUT_CHARACTERS} characters; split longer text into several requests.`,
      'input',
    );
  checkOptionalText(request, 'voice');
  checkOptionalText(request, 'instructions');
  const format = request.response_format ?? 'mp3';
  if (!(SPEECH_FORMATS as readonly unknown[]).includes(format))
    throw errors.invalidRequest(
      `response_format: must be one of ${SPEECH_FORMATS.join(', ')}.`,
      'response_format',
    );
  const speed = request.speed;
  if (speed !== undefined && !(typeof speed === 'number' && speed >= 0.25 && speed <= 4))
    throw errors.invalidRequest('speed: must be a number from 0.25 to 4.0.', 'speed');
  // Server-sent audio events are another answer format; this endpoint answers audio bytes.
  if (request.stream_format !== undefined && request.stream_format !== 'audio')
    throw errors.invalidRequest('stream_format: only audio is supported.', 'stream_format');
  return { ...request, model, input, response_format: format as SpeechFormat } as SpeechRequest;
}

/** Code points, the characters a speech provider counts and bills. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function checkOptionalText(request: Record<string, unknown>, name: string): void {
  const value = request[name];
  if (value === undefined) return;
  if (typeof value !== 'string' || value.trim() === '' || value.includes('\0'))
    throw errors.invalidRequest(`${name}: must be a non-empty string.`, name);
}
