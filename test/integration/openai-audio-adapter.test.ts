/**
 * The OpenAI-style speech and transcription capabilities against the fake audio upstream: what is
 * billed (characters; audio seconds; gpt-4o-transcribe's tokens), the announced length handed on for
 * the WAV rewrite, answers that are not audio refused as retryable protocol errors, the first audio
 * bytes held to the request deadline, error bodies never relayed, and Azure's deployment paths.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SpeechRequest, TranscriptionRequest, UploadedFile } from '../../src/canonical/modalities.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { encodeTranscription } from '../../src/wire/audio/encode-transcription.ts';
import { FakeOpenAiAudioServer } from '../fakes/fake-openai-audio-server.ts';
import { failure, settingsFor, waitUntil } from '../support/provider-adapter-suite.ts';

const openaiFactory = new Map(openAiCompatibleProviders()).get('openai')!;
const context = (deadline?: number) => ({
  signal: new AbortController().signal,
  requestId: 'req-audio',
  ...(deadline ? { deadline } : {}),
});

const speech: SpeechRequest = { model: 'tts-1', input: 'Grüße 😀', voice: 'alloy', response_format: 'mp3' };

function upload(bytes: Buffer): UploadedFile {
  return {
    filename: 'clip.wav',
    contentType: 'audio/wav',
    bytes: bytes.length,
    blob: async () => new Blob([bytes], { type: 'audio/wav' }),
  };
}

const transcription = (format: TranscriptionRequest['response_format']): TranscriptionRequest => ({
  model: 'whisper-1',
  file: upload(Buffer.from('RIFF fake audio')),
  response_format: format,
  extra: [],
});

async function bytesOf(audio: AsyncIterable<Buffer>): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of audio) pieces.push(piece);
  return Buffer.concat(pieces);
}

describe('OpenAI-style audio capabilities', () => {
  let upstream: FakeOpenAiAudioServer;
  let adapter: ProviderAdapter;

  beforeAll(async () => {
    upstream = await FakeOpenAiAudioServer.start();
    adapter = openaiFactory.create(
      settingsFor({ model: 'tts-1', api_base: upstream.baseUrl, api_key: 'sk-up' }),
    );
  });
  afterAll(async () => {
    await adapter?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('bills speech by the code points of its input and hands on the announced length', async () => {
    upstream.speech.push({ kind: 'audio', audio: Buffer.alloc(3000, 5), contentType: 'audio/wav' });
    const result = await adapter.speech!.speak(speech, context());
    expect(result).toMatchObject({ contentType: 'audio/wav', contentLength: 3000, units: { characters: 7 } });
    expect((await bytesOf(result.audio)).length).toBe(3000);
  });

  it("sends the deployment's default_params.voice_id as voice when the request has none, the caller's otherwise", async () => {
    const voiced = openaiFactory.create({
      ...settingsFor({ model: 'tts-1', api_base: upstream.baseUrl, api_key: 'sk-up' }),
      defaultParams: { voice_id: 'coral' },
    });
    try {
      const { voice: _none, ...unvoiced } = speech;
      await bytesOf((await voiced.speech!.speak(unvoiced, context())).audio);
      await bytesOf((await voiced.speech!.speak(speech, context())).audio);
      expect(upstream.requests.map((request) => request.json.voice)).toEqual(['coral', 'alloy']);
    } finally {
      await voiced.close();
    }
  });

  it('refuses a request without voice on a deployment without a default: 400 naming voice, nothing sent', async () => {
    const { voice: _none, ...unvoiced } = speech;
    const error = await adapter.speech!.speak(unvoiced, context()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect((error as GatewayError).message).toContain('default_params.voice_id');
    expect(upstream.requests).toHaveLength(0);
  });

  it('leaves the length out when the upstream streams without one', async () => {
    upstream.speech.push({ kind: 'audio', audio: Buffer.alloc(3000, 5), chunked: true });
    const result = await adapter.speech!.speak(speech, context());
    expect(result.contentLength).toBeUndefined();
    expect((await bytesOf(result.audio)).length).toBe(3000);
  });

  it('refuses a 200 answer that is JSON instead of audio as a retryable protocol error', async () => {
    upstream.speech.push({
      kind: 'audio',
      audio: Buffer.from('{"ok":true}'),
      contentType: 'application/json',
    });
    const error = await failure(adapter.speech!.speak(speech, context()));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('holds the first audio bytes to the request deadline', async () => {
    upstream.speech.push({ kind: 'stall', audio: Buffer.alloc(1000), bytes: 0 });
    const result = await adapter.speech!.speak(speech, context(Date.now() + 200));
    const error = await failure(bytesOf(result.audio));
    expect(error.kind).toBe('timeout');
    await waitUntil(() => upstream.requests[0]!.aborted);
  });

  it('classifies an upstream error by its status and never keeps its body', async () => {
    upstream.speech.push({ kind: 'error', status: 503 });
    const error = await failure(adapter.speech!.speak(speech, context()));
    expect(error).toMatchObject({ status: 503, retryable: true });
    expect(error.message).not.toContain('sk-upstream');
  });

  it('reads gpt-4o-transcribe token usage as prompt and completion tokens', async () => {
    upstream.transcriptions.push({
      kind: 'transcript',
      usage: {
        type: 'tokens',
        input_tokens: 40,
        output_tokens: 9,
        total_tokens: 49,
        input_token_details: { audio_tokens: 38, text_tokens: 2 },
      },
    });
    const result = await adapter.transcription!.transcribe(transcription('json'), context());
    expect(result.usage).toEqual({
      prompt_tokens: 40,
      completion_tokens: 9,
      total_tokens: 49,
      prompt_tokens_details: { audio_tokens: 38, text_tokens: 2 },
    });
    expect(result.units).toBeUndefined();
    expect(JSON.parse(result.raw!.body).text).toBe('Hello there. General Kenobi.');
  });

  it('reads billed seconds from a duration usage and from verbose_json', async () => {
    upstream.transcriptions.push({ kind: 'transcript', usage: { type: 'duration', seconds: 7 } });
    expect((await adapter.transcription!.transcribe(transcription('json'), context())).units).toEqual({
      audioSeconds: 7,
    });
    const verbose = await adapter.transcription!.transcribe(transcription('verbose_json'), context());
    expect(verbose.units).toEqual({ audioSeconds: 3.5 });
    expect(verbose.raw!.contentType).toBe('application/json');
  });

  it.each([
    ['text', 'text/plain; charset=utf-8', 'Hello there. General Kenobi.\n'],
    [
      'srt',
      'text/plain; charset=utf-8',
      '1\n00:00:00,000 --> 00:00:01,250\nHello there.\n\n2\n00:00:01,250 --> 00:00:03,500\nGeneral Kenobi.\n',
    ],
    [
      'vtt',
      'text/vtt; charset=utf-8',
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nHello there.\n\n00:00:01.250 --> 00:00:03.500\nGeneral Kenobi.\n',
    ],
  ] as const)(
    'asks a whisper model for verbose_json when the caller wants %s, bills its duration and writes the format locally',
    async (format, contentType, body) => {
      const result = await adapter.transcription!.transcribe(transcription(format), context());
      expect(upstream.requests[0]!.fields).toContainEqual(['response_format', 'verbose_json']);
      expect(upstream.requests[0]!.fields).not.toContainEqual(['response_format', format]);
      expect(upstream.requests[0]!.file!.bytes.toString()).toBe('RIFF fake audio');
      expect(result.units).toEqual({ audioSeconds: 3.5 });
      expect(result.raw).toBeUndefined();
      expect(encodeTranscription(result, format)).toEqual({ contentType, body });
    },
  );

  it('adds segment granularity to a word-only request it upgrades to verbose_json (cues need segments)', async () => {
    await adapter.transcription!.transcribe(
      { ...transcription('srt'), extra: [['timestamp_granularities[]', 'word']] },
      context(),
    );
    expect(upstream.requests[0]!.fields!.filter(([name]) => name === 'timestamp_granularities[]')).toEqual([
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
    ]);
  });

  it('asks a gpt-4o-transcribe model for json when the caller wants text, bills its tokens and writes the text', async () => {
    upstream.transcriptions.push({
      kind: 'transcript',
      usage: { type: 'tokens', input_tokens: 30, output_tokens: 6, total_tokens: 36 },
    });
    const result = await adapter.transcription!.transcribe(
      { ...transcription('text'), model: 'gpt-4o-mini-transcribe' },
      context(),
    );
    expect(upstream.requests[0]!.fields).toContainEqual(['response_format', 'json']);
    expect(result.usage).toEqual({ prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 });
    expect(encodeTranscription(result, 'text')).toEqual({
      contentType: 'text/plain; charset=utf-8',
      body: 'Hello there. General Kenobi.\n',
    });
  });

  it.each([
    ['srt', 'text/plain; charset=utf-8', 'text/plain; charset=utf-8'],
    ['srt', 'application/x-subrip', 'text/plain; charset=utf-8'],
    ['vtt', 'text/vtt', 'text/vtt; charset=utf-8'],
  ] as const)(
    'passes %s as asked to a model that is not whisper, accepting a %s answer',
    async (format, upstreamType, callerType) => {
      upstream.transcriptions.push({ kind: 'raw', contentType: upstreamType, body: 'cues\n' });
      const result = await adapter.transcription!.transcribe(
        { ...transcription(format), model: 'gpt-4o-transcribe' },
        context(),
      );
      expect(upstream.requests[0]!.fields).toContainEqual(['response_format', format]);
      expect(result.raw).toEqual({ contentType: callerType, body: 'cues\n' });
      expect(result.units).toBeUndefined();
    },
  );

  it.each(['text/html; charset=utf-8', 'application/octet-stream', 'text/csv'])(
    'refuses a 200 text answer of type %s (a proxy page, not a transcript) as a retryable protocol error',
    async (contentType) => {
      upstream.transcriptions.push({
        kind: 'raw',
        contentType,
        body: '<html><body>Bad gateway at proxy</body></html>',
      });
      const error = await failure(
        adapter.transcription!.transcribe({ ...transcription('vtt'), model: 'gpt-4o-transcribe' }, context()),
      );
      expect(error).toMatchObject({ kind: 'protocol', retryable: true });
      expect(error.message).not.toContain('proxy');
    },
  );

  it('refuses verbose_json segments without times or text as a retryable protocol error', async () => {
    upstream.transcriptions.push({
      kind: 'raw',
      contentType: 'application/json',
      body: JSON.stringify({ text: 'x', duration: 1, segments: [{ id: 0, start: 'soon', text: 'x' }] }),
    });
    const error = await failure(adapter.transcription!.transcribe(transcription('srt'), context()));
    expect(error).toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('refuses a json transcription without a string text as a retryable protocol error', async () => {
    for (const body of ['{"transcript": "x"}', 'not json']) {
      upstream.transcriptions.push({ kind: 'raw', contentType: 'application/json', body });
      const error = await failure(
        adapter.transcription!.transcribe(transcription('verbose_json'), context()),
      );
      expect(error).toMatchObject({ kind: 'protocol', retryable: true });
    }
  });

  it('classifies a failed transcription by its status', async () => {
    upstream.transcriptions.push({ kind: 'error', status: 400, code: 'invalid_file_format' });
    expect(await failure(adapter.transcription!.transcribe(transcription('json'), context()))).toMatchObject({
      status: 400,
      retryable: false,
    });
  });

  it("sends Azure's audio calls under its deployment path with the api-key header", async () => {
    const azure = azureProvider.create(
      settingsFor({
        model: 'my-whisper',
        api_base: upstream.origin,
        api_key: 'az-key',
        api_version: '2024-10-21',
      }),
    );
    try {
      await azure.transcription!.transcribe(transcription('text'), context());
      expect(upstream.requests[0]!.path).toBe(
        '/openai/deployments/my-whisper/audio/transcriptions?api-version=2024-10-21',
      );
      expect(upstream.requests[0]!.headers['api-key']).toBe('az-key');
    } finally {
      await azure.close();
    }
  });
});
