/** Canonical requests and adapters for the elevenlabs tests, pointed at the fake ElevenLabs API. */
import type { SpeechRequest, TranscriptionRequest, UploadedFile } from '../../../src/canonical/modalities.ts';
import { elevenLabsProvider } from '../../../src/providers/elevenlabs/index.ts';
import type { ProviderAdapter } from '../../../src/providers/provider-adapter.ts';
import { settingsFor } from '../../support/provider-adapter-suite.ts';
import { type ElevenLabsScenario, FAKE_API_KEY } from './fake-elevenlabs-server.ts';

export const context = () => ({ signal: new AbortController().signal, requestId: 'req-el' });

export function adapterFor(
  origin: string,
  options: { defaultParams?: Record<string, unknown>; apiKey?: string; streamIdleMs?: number } = {},
): ProviderAdapter {
  const params = {
    model: 'eleven_multilingual_v2',
    api_base: origin,
    api_key: options.apiKey ?? FAKE_API_KEY,
  };
  const settings = settingsFor(
    params,
    options.streamIdleMs !== undefined ? { streamIdleMs: options.streamIdleMs } : {},
  );
  return elevenLabsProvider.create(
    options.defaultParams ? { ...settings, defaultParams: options.defaultParams } : settings,
  );
}

export const speech = (overrides: Partial<SpeechRequest> = {}): SpeechRequest => ({
  model: 'eleven_multilingual_v2',
  input: 'Hello there',
  voice: 'JBFqnCBsd6RMkjVDRZzb',
  response_format: 'mp3',
  ...overrides,
});

/** An upload held in memory (the route spools real ones to a temporary file). */
export function upload(bytes: Buffer, filename = 'meeting.wav'): UploadedFile {
  return {
    filename,
    contentType: 'audio/wav',
    bytes: bytes.length,
    blob: async () => new Blob([new Uint8Array(bytes)], { type: 'audio/wav' }),
  };
}

/** Bytes a multipart encoder could get wrong: NUL, 0xFF, CRLF and a boundary-like `--`. */
export const AWKWARD_AUDIO = Buffer.from([
  0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0x80,
]);

export const transcription = (overrides: Partial<TranscriptionRequest> = {}): TranscriptionRequest => ({
  model: 'scribe_v1',
  file: upload(AWKWARD_AUDIO),
  response_format: 'verbose_json',
  extra: [],
  ...overrides,
});

export async function bytesOf(audio: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of audio) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** The fake ElevenLabs API's error answer of a status, its body from a fixture carrying the secret marker. */
export function errorScenario(error: { status: number; retryAfterSeconds?: number }): ElevenLabsScenario {
  const fixture =
    error.status === 401
      ? 'error-invalid-api-key.json'
      : error.status === 400 || error.status === 422
        ? 'error-validation.json'
        : 'error-concurrency.json';
  return {
    kind: 'error',
    status: error.status,
    fixture,
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
  };
}
