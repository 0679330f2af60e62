/**
 * The transcription conformance suite (test/support/transcription-adapter-suite.ts) run against every
 * transcription adapter with its fake upstream: `openai` and `azure` against the fake OpenAI audio
 * server, and `elevenlabs` against the fake ElevenLabs API, each fake's scenarios mapped to the suite's.
 */
import { expect } from 'vitest';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { elevenLabsProvider } from '../../src/providers/elevenlabs/index.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { errorScenario } from '../fakes/elevenlabs/elevenlabs-requests.ts';
import {
  type ElevenLabsScenario,
  FAKE_API_KEY,
  FakeElevenLabsServer,
  type RecordedElevenLabsRequest,
} from '../fakes/elevenlabs/fake-elevenlabs-server.ts';
import {
  FakeOpenAiAudioServer,
  type TranscriptionScenario as OpenAiTranscriptionScenario,
  type RecordedAudioRequest,
} from '../fakes/fake-openai-audio-server.ts';
import { suiteUpstream } from '../support/capability-suite-kit.ts';
import {
  runTranscriptionAdapterSuite,
  type TranscriptionScenario,
} from '../support/transcription-adapter-suite.ts';

function toOpenAi(scenario: TranscriptionScenario): OpenAiTranscriptionScenario {
  switch (scenario.kind) {
    case 'error':
      return { kind: 'error', status: scenario.status, retryAfterSeconds: scenario.retryAfterSeconds };
    case 'malformed':
      return { kind: 'raw', contentType: 'text/html', body: '<html>sk-upstream login page</html>' };
    case 'hang':
      return scenario;
  }
}

const openAiStyle = {
  async startUpstream() {
    const server = await FakeOpenAiAudioServer.start();
    return suiteUpstream(server, (scenario: TranscriptionScenario) =>
      server.transcriptions.push(toOpenAi(scenario)),
    );
  },
  uploadOf(seen: unknown) {
    const request = seen as RecordedAudioRequest;
    return { bytes: request.file?.bytes, fields: Object.fromEntries(request.fields ?? []) };
  },
  languageField: 'language',
  durationSeconds: 3.5,
  secret: 'sk-upstream',
  sendsRetryAfter: true,
};

runTranscriptionAdapterSuite({
  ...openAiStyle,
  name: 'openai',
  factory: new Map(openAiCompatibleProviders()).get('openai') as ProviderFactory,
  params: (origin) => ({ model: 'whisper-1', api_base: `${origin}/v1`, api_key: 'sk-up' }),
  expectEndpoint(seen) {
    const request = seen as RecordedAudioRequest;
    expect(request.path).toBe('/v1/audio/transcriptions');
    expect(request.headers.authorization).toBe('Bearer sk-up');
    expect(request.file?.field).toBe('file');
  },
});

runTranscriptionAdapterSuite({
  ...openAiStyle,
  name: 'azure',
  factory: azureProvider,
  params: (origin) => ({
    model: 'whisper-deployment',
    api_base: origin,
    api_key: 'azure-key',
    api_version: '2024-06-01',
  }),
  expectEndpoint(seen) {
    const request = seen as RecordedAudioRequest;
    expect(request.path).toBe(
      '/openai/deployments/whisper-deployment/audio/transcriptions?api-version=2024-06-01',
    );
    expect(request.headers['api-key']).toBe('azure-key');
  },
});

function toElevenLabs(scenario: TranscriptionScenario): ElevenLabsScenario {
  switch (scenario.kind) {
    case 'error':
      return errorScenario(scenario);
    case 'malformed':
      return { kind: 'json-instead-of-audio' };
    case 'hang':
      return scenario;
  }
}

runTranscriptionAdapterSuite({
  name: 'elevenlabs',
  factory: elevenLabsProvider,
  async startUpstream() {
    const server = await FakeElevenLabsServer.start();
    return suiteUpstream(server, (scenario: TranscriptionScenario) => server.enqueue(toElevenLabs(scenario)));
  },
  params: (origin) => ({ model: 'scribe_v1', api_base: origin, api_key: FAKE_API_KEY }),
  expectEndpoint(seen) {
    const request = seen as RecordedElevenLabsRequest;
    expect(request.path).toBe('/v1/speech-to-text');
    expect(request.headers['xi-api-key']).toBe(FAKE_API_KEY);
    expect(request.form?.fields.model_id).toBe('scribe_v1');
  },
  uploadOf(seen) {
    const { form } = seen as RecordedElevenLabsRequest;
    return { bytes: form?.file?.bytes, fields: form?.fields ?? {} };
  },
  languageField: 'language_code',
  durationSeconds: 4.95,
  secret: 'upstream-secret-marker',
  sendsRetryAfter: true,
});
