/**
 * The `elevenlabs` provider against a fake ElevenLabs API (spec rules 7 and 8): what text-to-speech and
 * speech-to-text calls look like upstream, how answers become canonical results, how failures are
 * classified (caller mistakes as 400s naming the field, upstream ones as UpstreamErrors that never carry
 * the body), and how a LiteLLM-format config loads.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SpeechRequest, TranscriptionRequest, UploadedFile } from '../../src/canonical/modalities.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { elevenLabsProvider } from '../../src/providers/elevenlabs/index.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import {
  FAKE_API_KEY,
  FakeElevenLabsServer,
  mp3For,
  pcmFor,
} from '../fakes/elevenlabs/fake-elevenlabs-server.ts';
import { settingsFor } from '../support/provider-adapter-suite.ts';

const context = () => ({ signal: new AbortController().signal, requestId: 'req-el' });

function adapterFor(
  origin: string,
  defaultParams?: Record<string, unknown>,
  model = 'eleven_multilingual_v2',
) {
  const settings = settingsFor({ model, api_base: origin, api_key: FAKE_API_KEY });
  return elevenLabsProvider.create(defaultParams ? { ...settings, defaultParams } : settings);
}

const speech = (overrides: Partial<SpeechRequest> = {}): SpeechRequest => ({
  model: 'eleven_multilingual_v2',
  input: 'Hello there',
  voice: 'JBFqnCBsd6RMkjVDRZzb',
  response_format: 'mp3',
  ...overrides,
});

/** An upload held in memory (the route spools real ones to a temporary file). */
function upload(bytes: Buffer, filename = 'meeting.wav'): UploadedFile {
  return {
    filename,
    contentType: 'audio/wav',
    bytes: bytes.length,
    async *open() {
      yield bytes;
    },
    blob: async () => new Blob([new Uint8Array(bytes)], { type: 'audio/wav' }),
  };
}

const transcription = (overrides: Partial<TranscriptionRequest> = {}): TranscriptionRequest => ({
  model: 'scribe_v1',
  file: upload(Buffer.from([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0x80])),
  response_format: 'verbose_json',
  extra: [],
  ...overrides,
});

async function bytesOf(audio: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of audio) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function speak(adapter: ProviderAdapter, request: SpeechRequest) {
  return adapter.speech!.speak(request, context());
}

let upstream: FakeElevenLabsServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await FakeElevenLabsServer.start();
  adapter = adapterFor(upstream.origin);
});
afterAll(async () => {
  await adapter?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

describe('elevenlabs text to speech (spec rule 7)', () => {
  it('streams input as text to the voice in the path, with the xi-api-key header and the output format', async () => {
    const result = await speak(adapter, speech({ input: 'Olá, mundo 👋', speed: 1.1 }));
    const seen = upstream.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
    expect(seen.query).toEqual({ output_format: 'mp3_44100_128' });
    expect(seen.headers['xi-api-key']).toBe(FAKE_API_KEY);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.json).toEqual({
      text: 'Olá, mundo 👋',
      model_id: 'eleven_multilingual_v2',
      voice_settings: { speed: 1.1 },
    });
    expect(result.contentType).toBe('audio/mpeg');
    expect(await bytesOf(result.audio)).toEqual(mp3For('Olá, mundo 👋'));
  });

  it('bills characters as code points of input, and sends no voice_settings without speed', async () => {
    const result = await speak(adapter, speech({ input: 'ab👋' }));
    await bytesOf(result.audio);
    expect(result.units).toEqual({ characters: 3 });
    expect(upstream.requests[0]!.json).toEqual({ text: 'ab👋', model_id: 'eleven_multilingual_v2' });
  });

  it("uses the deployment's model_info.default_params.voice_id when the caller names no voice", async () => {
    const configured = adapterFor(upstream.origin, { voice_id: 'voice-from-config' });
    try {
      const result = await speak(configured, speech({ voice: undefined }));
      await bytesOf(result.audio);
      expect(upstream.requests[0]!.path).toBe('/v1/text-to-speech/voice-from-config/stream');
      // The caller's voice wins over the deployment's.
      await bytesOf((await speak(configured, speech())).audio);
      expect(upstream.requests[1]!.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
    } finally {
      await configured.close();
    }
  });

  it('refuses a request without a voice on a deployment without a default as a 400 naming voice, sending nothing', async () => {
    for (const voice of [undefined, '']) {
      const error = await rejection(speak(adapter, speech({ voice })));
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ status: 400, param: 'voice' });
      expect((error as GatewayError).message).toContain('model_info.default_params.voice_id');
    }
    expect(upstream.requests).toEqual([]);
  });

  it('escapes the voice into one path segment', async () => {
    upstream.enqueue({ kind: 'audio', pieces: [Buffer.from('x')] });
    await rejection(speak(adapter, speech({ voice: '../../v1/speech-to-text?x=1#' })));
    expect(upstream.requests[0]!.path).toBe(
      '/v1/text-to-speech/..%2F..%2Fv1%2Fspeech-to-text%3Fx%3D1%23/stream',
    );
  });

  it('answers an unknown voice the caller named as a 400 naming voice, never the upstream body', async () => {
    const error = await rejection(speak(adapter, speech({ voice: 'alloy' })));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect(JSON.stringify(error)).not.toContain('upstream-secret-marker');
    expect((error as Error).message).not.toContain('upstream-secret-marker');
  });

  it("treats an unknown default voice as the deployment's misconfiguration (a 404 UpstreamError)", async () => {
    const misconfigured = adapterFor(upstream.origin, { voice_id: 'deleted-voice' });
    try {
      const error = await rejection(speak(misconfigured, speech({ voice: undefined })));
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 404, retryable: false, providerCode: 'voice_not_found' });
    } finally {
      await misconfigured.close();
    }
  });

  it('refuses aac and flac as a 400 naming response_format with the formats it can serve', async () => {
    for (const format of ['aac', 'flac'] as const) {
      const error = await rejection(speak(adapter, speech({ response_format: format })));
      expect(error).toMatchObject({ status: 400, param: 'response_format' });
      expect((error as Error).message).toContain('mp3, opus, pcm, wav');
    }
    expect(upstream.requests).toEqual([]);
  });

  it('asks for 24 kHz PCM for pcm and passes the bytes through, samples split across pieces intact', async () => {
    const result = await speak(adapter, speech({ response_format: 'pcm', input: 'pcm please' }));
    expect(upstream.requests[0]!.query.output_format).toBe('pcm_24000');
    expect(result.contentType).toBe('audio/pcm');
    expect(await bytesOf(result.audio)).toEqual(pcmFor('pcm please'));
  });

  it('asks for opus at 48 kHz', async () => {
    const result = await speak(adapter, speech({ response_format: 'opus' }));
    await bytesOf(result.audio);
    expect(upstream.requests[0]!.query.output_format).toBe('opus_48000_64');
    expect(result.contentType).toBe('audio/opus');
  });

  it('wraps 24 kHz PCM in a WAV header with placeholder sizes, sent with the first audio bytes', async () => {
    const result = await speak(adapter, speech({ response_format: 'wav', input: 'a wave' }));
    expect(upstream.requests[0]!.query.output_format).toBe('pcm_24000');
    expect(result.contentType).toBe('audio/wav');
    expect(result.contentLength).toBeUndefined(); // the fake streams chunked
    const chunks: Buffer[] = [];
    for await (const chunk of result.audio) chunks.push(chunk);
    expect(chunks[0]!.length).toBeGreaterThan(44); // never the header alone
    const wav = Buffer.concat(chunks);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(0xffffffff);
    expect(wav.readUInt32LE(24)).toBe(24_000);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.readUInt32LE(40)).toBe(0xffffffff);
    expect(wav.subarray(44)).toEqual(pcmFor('a wave'));
  });

  it('reports the announced length, with the WAV header counted', async () => {
    const pcm = pcmFor('sized');
    upstream.enqueue({ kind: 'audio', pieces: [pcm], announceLength: true });
    const wav = await speak(adapter, speech({ response_format: 'wav' }));
    expect(wav.contentLength).toBe(pcm.length + 44);
    expect((await bytesOf(wav.audio)).length).toBe(pcm.length + 44);
    upstream.enqueue({ kind: 'audio', pieces: [Buffer.from('mp3-bytes')], announceLength: true });
    const mp3 = await speak(adapter, speech());
    expect(mp3.contentLength).toBe(9);
    await bytesOf(mp3.audio);
  });

  it('fails the audio iterator with an UpstreamError when the upstream breaks mid-stream', async () => {
    upstream.enqueue({ kind: 'break-audio', pieces: [Buffer.from('first-bytes'), Buffer.from('second')] });
    const result = await speak(adapter, speech());
    const received: Buffer[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of result.audio) received.push(chunk);
      })(),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(Buffer.concat(received).toString()).toContain('first-bytes');
  });

  it('treats a JSON answer where audio belongs as a retryable protocol error', async () => {
    upstream.enqueue({ kind: 'json-instead-of-audio' });
    const error = await rejection(speak(adapter, speech()));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('times out a stream whose headers never come', async () => {
    const slow = elevenLabsProvider.create(
      settingsFor(
        { model: 'eleven_multilingual_v2', api_base: upstream.origin, api_key: FAKE_API_KEY },
        { streamIdleMs: 150 },
      ),
    );
    try {
      upstream.enqueue({ kind: 'hang' });
      const error = await rejection(speak(slow, speech()));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    } finally {
      await slow.close();
    }
  });
});

describe('elevenlabs error classification', () => {
  it('retries a 429 after its Retry-After, and never keeps the body', async () => {
    upstream.enqueue({ kind: 'error', status: 429, fixture: 'error-concurrency.json', retryAfterSeconds: 3 });
    const error = await rejection(speak(adapter, speech()));
    expect(error).toMatchObject({
      kind: 'status',
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      providerCode: 'too_many_concurrent_requests',
    });
    expect((error as Error).message).not.toContain('upstream-secret-marker');
  });

  it('does not retry a rejected key (401) or an invalid request (422), keeping only the short code', async () => {
    const wrongKey = elevenLabsProvider.create(
      settingsFor({ model: 'eleven_multilingual_v2', api_base: upstream.origin, api_key: 'wrong' }),
    );
    try {
      expect(await rejection(speak(wrongKey, speech()))).toMatchObject({
        status: 401,
        retryable: false,
        providerCode: 'invalid_api_key',
      });
    } finally {
      await wrongKey.close();
    }
    upstream.enqueue({ kind: 'error', status: 422, fixture: 'error-validation.json' });
    expect(await rejection(speak(adapter, speech()))).toMatchObject({
      status: 422,
      retryable: false,
      providerCode: 'missing',
    });
  });

  it('retries a 503', async () => {
    upstream.enqueue({ kind: 'error', status: 503, fixture: 'error-concurrency.json' });
    expect(await rejection(speak(adapter, speech()))).toMatchObject({ status: 503, retryable: true });
  });
});

describe('elevenlabs speech to text (spec rule 8)', () => {
  it('uploads the file intact with model_id, language_code, temperature and word timestamps', async () => {
    const request = transcription({ language: 'en', temperature: 0.3, prompt: 'ignored hint' });
    await adapter.transcription!.transcribe(request, context());
    const seen = upstream.requests[0]!;
    expect(seen.path).toBe('/v1/speech-to-text');
    expect(seen.headers['xi-api-key']).toBe(FAKE_API_KEY);
    expect(seen.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen.form!.fields).toEqual({
      model_id: 'scribe_v1',
      language_code: 'en',
      temperature: '0.3',
      timestamps_granularity: 'word',
    });
    expect(seen.form!.file!.filename).toBe('meeting.wav');
    expect(seen.form!.file!.bytes).toEqual(
      Buffer.from([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0x80]),
    );
  });

  it('sends no language_code or temperature when the caller gave none', async () => {
    await adapter.transcription!.transcribe(transcription(), context());
    expect(upstream.requests[0]!.form!.fields).toEqual({
      model_id: 'scribe_v1',
      timestamps_granularity: 'word',
    });
  });

  it('answers a transcript with words and segments, billed by the seconds it covers', async () => {
    const result = await adapter.transcription!.transcribe(transcription(), context());
    expect(result.raw).toBeUndefined();
    expect(result.units).toEqual({ audioSeconds: 4.95 });
    expect(result.usage).toBeUndefined();
    expect(result.transcript).toMatchObject({
      text: "Good morning, everyone. (laughter) Let's begin the review.",
      language: 'eng',
      duration: 4.95,
    });
    expect(result.transcript!.segments!.map((segment) => segment.text)).toEqual([
      'Good morning, everyone.',
      '(laughter)',
      "Let's begin the review.",
    ]);
    expect(result.transcript!.words).toHaveLength(7);
  });

  it('bills nothing by the second when the transcript has no timed words', async () => {
    upstream.enqueue({ kind: 'transcript', fixture: 'stt-silence.json' });
    const result = await adapter.transcription!.transcribe(transcription(), context());
    expect(result.units).toBeUndefined();
    expect(result.transcript!.text).toBe('');
  });

  it('classifies errors without the body and treats a malformed answer as a protocol error', async () => {
    upstream.enqueue({ kind: 'error', status: 422, fixture: 'error-validation.json' });
    const invalid = await rejection(adapter.transcription!.transcribe(transcription(), context()));
    expect(invalid).toMatchObject({ status: 422, retryable: false, providerCode: 'missing' });
    expect((invalid as Error).message).not.toContain('upstream-secret-marker');
    upstream.enqueue({ kind: 'json-instead-of-audio' });
    const malformed = await rejection(adapter.transcription!.transcribe(transcription(), context()));
    expect(malformed).toMatchObject({ kind: 'protocol', retryable: true });
  });
});

describe('elevenlabs in a LiteLLM-format config', () => {
  const load = (yaml: string) => {
    const providers = builtinProviders();
    const config = parseConfig(yaml, {
      checkDeployment: (deploymentParams, index) => deploymentProblems(deploymentParams, index, providers),
      path: undefined,
      env: { ELEVENLABS_API_KEY: 'xi-from-env' },
      dataDir: '/tmp/switchboard-elevenlabs',
      source: 'elevenlabs.yaml',
    });
    const warnings: string[] = [];
    return { config, registry: buildModelRegistry(config, providers, Date.now(), warnings), warnings };
  };

  it('loads elevenlabs/<model> speech and transcription groups with a default voice, without warnings', async () => {
    const { config, registry, warnings } = load(`
model_list:
  - model_name: narrator
    litellm_params:
      model: elevenlabs/eleven_multilingual_v2
      api_key: os.environ/ELEVENLABS_API_KEY
    model_info: { mode: audio_speech, default_params: { voice_id: JBFqnCBsd6RMkjVDRZzb } }
  - model_name: scribe
    litellm_params: { model: elevenlabs/scribe_v1, api_key: os.environ/ELEVENLABS_API_KEY }
    model_info: { mode: audio_transcription }
`);
    expect(warnings).toEqual([]);
    expect(config.model_list[0]!.params).toMatchObject({
      provider: 'elevenlabs',
      model: 'eleven_multilingual_v2',
      api_key: 'xi-from-env',
    });
    expect(registry.group('narrator')?.mode).toBe('audio_speech');
    expect(registry.group('scribe')?.mode).toBe('audio_transcription');
    for (const group of ['narrator', 'scribe']) await registry.group(group)?.deployments[0]?.adapter.close();
  });

  it('refuses a chat group on elevenlabs, a deployment without a key, and unknown default_params keys', () => {
    const refusal = (yaml: string) => {
      try {
        load(yaml);
      } catch (error) {
        if (error instanceof ConfigError) return error.message;
        throw error;
      }
      throw new Error('expected a ConfigError');
    };
    expect(
      refusal(
        'model_list:\n  - model_name: talk\n    litellm_params: { model: elevenlabs/eleven_v3, api_key: k }\n',
      ),
    ).toMatch(/model_list\[0\]\.model_info\.mode: 'chat'.* needs the chat capability/);
    expect(
      refusal(
        'model_list:\n  - model_name: talk\n    litellm_params: { model: elevenlabs/scribe_v1 }\n    model_info: { mode: audio_transcription }\n',
      ),
    ).toContain('api_key: is required for the ElevenLabs API');
    expect(
      refusal(
        'model_list:\n  - model_name: talk\n    litellm_params: { model: elevenlabs/eleven_v3, api_key: k }\n    model_info: { mode: audio_speech, default_params: { voice: x } }\n',
      ),
    ).toContain('model_list[0].model_info.default_params.voice');
  });
});
