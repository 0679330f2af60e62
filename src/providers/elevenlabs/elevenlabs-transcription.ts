/**
 * Speech to text through ElevenLabs (`POST /v1/speech-to-text`, multipart): the deployment's model as
 * `model_id`, the upload as `file` (streamed from its spooled file), `language` as `language_code`,
 * `temperature` as is (ElevenLabs takes 0–2, a superset of OpenAI's 0–1) and word timestamps. The
 * answer is converted to a canonical transcript, from which the route writes the requested format.
 */
import type { TranscriptionRequest, TranscriptionResult } from '../../canonical/modalities.ts';
import { type MultipartBody, multipartBody } from '../multipart-body.ts';
import type { AttemptContext, TranscriptionCapability } from '../provider-adapter.ts';
import { LocalFailure } from '../upstream-error.ts';
import { readJsonAnswer } from '../upstream-exchange.ts';
import type { ElevenLabsClient } from './elevenlabs-client.ts';
import { classifyElevenLabsError } from './elevenlabs-errors.ts';
import { toTranscript } from './to-transcript.ts';

export class ElevenLabsTranscription implements TranscriptionCapability {
  private readonly client: ElevenLabsClient;

  constructor(client: ElevenLabsClient) {
    this.client = client;
  }

  async transcribe(request: TranscriptionRequest, context: AttemptContext): Promise<TranscriptionResult> {
    const multipart = await encode(request);
    const response = await this.client.send(
      {
        operation: 'speech-to-text',
        contentType: multipart.contentType,
        accept: 'application/json',
        body: multipart.body,
        streaming: false,
      },
      context,
    );
    if (response.status >= 400) throw await classifyElevenLabsError(response);
    const { parsed } = await readJsonAnswer(response);
    const transcript = toTranscript(parsed);
    return {
      transcript,
      ...(transcript.duration !== undefined ? { units: { audioSeconds: transcript.duration } } : {}),
    };
  }
}

/** The form ElevenLabs reads; the caller's `prompt` and other OpenAI-only fields have no counterpart. */
async function encode(request: TranscriptionRequest): Promise<MultipartBody> {
  const fields: Array<[string, string]> = [['model_id', request.model]];
  if (request.language) fields.push(['language_code', request.language]);
  if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
  fields.push(['timestamps_granularity', 'word']);
  try {
    return await multipartBody(fields, { field: 'file', upload: request.file });
  } catch (error) {
    // The spooled upload could not be read: our failure, not the upstream's.
    throw new LocalFailure(error);
  }
}
