/**
 * The `elevenlabs` provider's speech to text against a fake ElevenLabs API (spec rule 8): the multipart
 * upload it sends, the transcript it answers, its errors, and how a LiteLLM-format config loads.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import {
  AWKWARD_AUDIO,
  adapterFor,
  context,
  rejection,
  transcription,
} from '../fakes/elevenlabs/elevenlabs-requests.ts';
import { FAKE_API_KEY, FakeElevenLabsServer } from '../fakes/elevenlabs/fake-elevenlabs-server.ts';

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
    expect(seen.form!.file!.bytes).toEqual(AWKWARD_AUDIO);
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
