/**
 * The `elevenlabs` provider's text to speech against a fake ElevenLabs API (spec rule 7): what the
 * streaming call looks like upstream, the audio and WAV wrapping the caller gets, caller mistakes as 400s
 * naming the field, and upstream failures classified without their body.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SpeechRequest } from '../../src/canonical/modalities.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { adapterFor, bytesOf, context, rejection, speech } from '../fakes/elevenlabs/elevenlabs-requests.ts';
import {
  FAKE_API_KEY,
  FakeElevenLabsServer,
  mp3For,
  pcmFor,
} from '../fakes/elevenlabs/fake-elevenlabs-server.ts';

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
    const configured = adapterFor(upstream.origin, { defaultParams: { voice_id: 'voice-from-config' } });
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

  it('refuses a voice that is not a plain id instead of putting it in the path (elevenlabs-voices.test.ts)', async () => {
    const error = await rejection(speak(adapter, speech({ voice: '../../v1/speech-to-text?x=1#' })));
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect(upstream.requests).toEqual([]);
  });

  it('answers an unknown voice the caller named as a 400 naming voice, never the upstream body', async () => {
    const error = await rejection(speak(adapter, speech({ voice: 'alloy' })));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect(JSON.stringify(error)).not.toContain('upstream-secret-marker');
    expect((error as Error).message).not.toContain('upstream-secret-marker');
  });

  it("treats an unknown default voice as the deployment's misconfiguration (a 404 UpstreamError)", async () => {
    const misconfigured = adapterFor(upstream.origin, { defaultParams: { voice_id: 'deleted-voice' } });
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
    const slow = adapterFor(upstream.origin, { streamIdleMs: 150 });
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
    const wrongKey = adapterFor(upstream.origin, { apiKey: 'wrong' });
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
