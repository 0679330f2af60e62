/**
 * The speech conformance suite (test/support/speech-adapter-suite.ts) run against every speech
 * adapter with its fake upstream: `openai` and `azure` against the fake OpenAI audio server, and
 * `elevenlabs` against the fake ElevenLabs API, each fake's scenarios mapped to the suite's.
 */
import { expect } from 'vitest';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { elevenLabsProvider } from '../../src/providers/elevenlabs/index.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { speech as elevenLabsSpeech, errorScenario } from '../fakes/elevenlabs/elevenlabs-requests.ts';
import {
  type ElevenLabsScenario,
  FAKE_API_KEY,
  FakeElevenLabsServer,
} from '../fakes/elevenlabs/fake-elevenlabs-server.ts';
import {
  FakeOpenAiAudioServer,
  type SpeechScenario as OpenAiSpeechScenario,
  type RecordedAudioRequest,
} from '../fakes/fake-openai-audio-server.ts';
import { suiteUpstream } from '../support/capability-suite-kit.ts';
import { runSpeechAdapterSuite, type SpeechScenario } from '../support/speech-adapter-suite.ts';

/** Bytes the OpenAI fake still holds back when it stalls or breaks (it announces the whole length). */
const HELD_BACK = Buffer.alloc(64, 7);

function toOpenAi(scenario: SpeechScenario): OpenAiSpeechScenario {
  const sent = 'pieces' in scenario ? Buffer.concat(scenario.pieces) : Buffer.alloc(0);
  switch (scenario.kind) {
    case 'audio':
      return { kind: 'audio', audio: sent, chunkBytes: scenario.pieces[0]?.length ?? 1, chunked: true };
    case 'stall':
      return { kind: 'stall', audio: Buffer.concat([sent, HELD_BACK]), bytes: sent.length };
    case 'break':
      return { kind: 'break', audio: Buffer.concat([sent, HELD_BACK]), bytesBeforeBreak: sent.length };
    case 'error':
      return { kind: 'error', status: scenario.status, retryAfterSeconds: scenario.retryAfterSeconds };
    case 'not-audio':
      return { kind: 'audio', audio: Buffer.from('{"ok":true}'), contentType: 'application/json' };
  }
}

async function startOpenAiAudio() {
  const server = await FakeOpenAiAudioServer.start();
  return suiteUpstream(server, (scenario: SpeechScenario) => server.speech.push(toOpenAi(scenario)));
}

const openAiStyle = {
  startUpstream: startOpenAiAudio,
  request: { model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'mp3' as const },
  secret: 'sk-upstream',
  sendsRetryAfter: true,
};

runSpeechAdapterSuite({
  ...openAiStyle,
  name: 'openai',
  factory: new Map(openAiCompatibleProviders()).get('openai') as ProviderFactory,
  params: (origin) => ({ model: 'tts-1', api_base: `${origin}/v1`, api_key: 'sk-up' }),
  expectEndpoint(seen, input) {
    const request = seen as RecordedAudioRequest;
    expect(request.path).toBe('/v1/audio/speech');
    expect(request.headers.authorization).toBe('Bearer sk-up');
    expect(request.json).toMatchObject({ model: 'tts-1', input, voice: 'alloy' });
  },
});

runSpeechAdapterSuite({
  ...openAiStyle,
  name: 'azure',
  factory: azureProvider,
  params: (origin) => ({
    model: 'tts-deployment',
    api_base: origin,
    api_key: 'azure-key',
    api_version: '2025-03-01-preview',
  }),
  expectEndpoint(seen, input) {
    const request = seen as RecordedAudioRequest;
    expect(request.path).toBe(
      '/openai/deployments/tts-deployment/audio/speech?api-version=2025-03-01-preview',
    );
    expect(request.headers['api-key']).toBe('azure-key');
    expect(request.json).toMatchObject({ input });
  },
});

function toElevenLabs(scenario: SpeechScenario): ElevenLabsScenario {
  switch (scenario.kind) {
    case 'audio':
      return { kind: 'audio', pieces: scenario.pieces, contentType: 'audio/mpeg' };
    case 'stall':
      return { kind: 'stall-audio', pieces: scenario.pieces };
    case 'break':
      return { kind: 'break-audio', pieces: scenario.pieces };
    case 'error':
      return errorScenario(scenario);
    case 'not-audio':
      return { kind: 'json-instead-of-audio' };
  }
}

runSpeechAdapterSuite({
  name: 'elevenlabs',
  factory: elevenLabsProvider,
  async startUpstream() {
    const server = await FakeElevenLabsServer.start();
    return suiteUpstream(server, (scenario: SpeechScenario) => server.enqueue(toElevenLabs(scenario)));
  },
  params: (origin) => ({ model: 'eleven_multilingual_v2', api_base: origin, api_key: FAKE_API_KEY }),
  request: elevenLabsSpeech(),
  expectEndpoint(seen, input) {
    const request = seen as { path: string; query: Record<string, string>; headers: any; json: any };
    expect(request.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
    expect(request.query.output_format).toBe('mp3_44100_128');
    expect(request.headers['xi-api-key']).toBe(FAKE_API_KEY);
    expect(request.json).toMatchObject({ text: input, model_id: 'eleven_multilingual_v2' });
  },
  secret: 'upstream-secret-marker',
  sendsRetryAfter: true,
});
