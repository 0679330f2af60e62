/**
 * Decodes the form fields of POST /v1/audio/transcriptions into the canonical request: `model`
 * required, `response_format` one of the public formats (json by default), `temperature` a number from
 * 0 to 1, `language` and `prompt` text. Other fields (`timestamp_granularities[]`, `include[]` …) are
 * kept in the order sent for OpenAI-style upstreams. Every refusal is a 400 naming the field.
 */
import {
  TRANSCRIPTION_FORMATS,
  type TranscriptionFormat,
  type TranscriptionRequest,
  type UploadedFile,
} from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** Fields read here; each may be sent once. */
const KNOWN_FIELDS = new Set(['model', 'response_format', 'temperature', 'language', 'prompt']);

export function decodeTranscriptionRequest(
  fields: ReadonlyArray<readonly [name: string, value: string]>,
  file: UploadedFile | undefined,
): TranscriptionRequest {
  const known = new Map<string, string>();
  const extra: Array<readonly [string, string]> = [];
  for (const [name, value] of fields) {
    if (value.includes('\0') || name.includes('\0'))
      throw errors.invalidRequest(`${name}: NUL characters are not allowed.`, name);
    if (!KNOWN_FIELDS.has(name)) {
      extra.push([name, value]);
      continue;
    }
    if (known.has(name)) throw errors.invalidRequest(`${name}: send the field once.`, name);
    known.set(name, value);
  }
  if (!file)
    throw errors.invalidRequest('file: the form has no file; send the audio in the field file.', 'file');
  if (file.bytes === 0) throw errors.invalidRequest('file: the uploaded file is empty.', 'file');
  const model = known.get('model');
  if (model === undefined || model.trim() === '')
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  refuseStreaming(extra);
  const request: TranscriptionRequest = {
    model,
    file,
    response_format: formatOf(known.get('response_format')),
    extra,
  };
  const temperature = known.get('temperature');
  if (temperature !== undefined) request.temperature = temperatureOf(temperature);
  const language = known.get('language');
  if (language !== undefined) request.language = textOf('language', language, 64);
  const prompt = known.get('prompt');
  if (prompt !== undefined) request.prompt = prompt;
  return request;
}

function formatOf(value: string | undefined): TranscriptionFormat {
  if (value === undefined) return 'json';
  if ((TRANSCRIPTION_FORMATS as readonly string[]).includes(value)) return value as TranscriptionFormat;
  throw errors.invalidRequest(
    `response_format: must be one of ${TRANSCRIPTION_FORMATS.join(', ')}.`,
    'response_format',
  );
}

function temperatureOf(value: string): number {
  const number = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(number) || number < 0 || number > 1)
    throw errors.invalidRequest('temperature: must be a number from 0 to 1.', 'temperature');
  return number;
}

function textOf(name: string, value: string, maxLength: number): string {
  if (value.trim() === '' || value.length > maxLength)
    throw errors.invalidRequest(
      `${name}: must be a non-empty string of at most ${maxLength} characters.`,
      name,
    );
  return value;
}

/** A streamed transcription (events instead of one answer) is not served: say so rather than mangle it. */
function refuseStreaming(extra: ReadonlyArray<readonly [string, string]>): void {
  const stream = extra.find(([name]) => name === 'stream');
  if (stream && stream[1] !== 'false')
    throw errors.invalidRequest(
      'stream: streamed transcriptions are not supported; leave stream out.',
      'stream',
    );
}
