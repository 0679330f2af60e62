/**
 * ElevenLabs voice ids (M5 of the issue-13 review): the voice goes into the upstream URL path, so a
 * caller's voice that is not a plain id (`..` survives percent-encoding) is a 400 naming `voice` before
 * any upstream call, and a configured default voice_id that is not one is refused at start. A 404 for
 * a voice the caller named is the caller's mistake (400 `voice`), not the deployment's; a 404 that
 * names something else, or one for the deployment's own default voice, stays the deployment's.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import { errorCodeOf } from '../../src/providers/elevenlabs/elevenlabs-errors.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { adapterFor, context, rejection, speech } from '../fakes/elevenlabs/elevenlabs-requests.ts';
import { FakeElevenLabsServer, readFixture } from '../fakes/elevenlabs/fake-elevenlabs-server.ts';

let upstream: FakeElevenLabsServer;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await FakeElevenLabsServer.start();
  adapter = adapterFor(upstream.origin, { defaultParams: { voice_id: 'voice-from-config' } });
});
afterAll(async () => {
  await adapter?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

const speak = (voice: string | undefined) => adapter.speech!.speak(speech({ voice }), context());

describe('elevenlabs voice ids', () => {
  it.each([
    '..',
    '../../v1/speech-to-text',
    'JBFqnCBsd6RMkjVDRZzb/../x',
    'voice%2F..',
    'a b',
    'voice\u0000',
    'x'.repeat(65),
  ])('refuses the caller voice %j as a 400 naming voice, calling nothing upstream', async (voice) => {
    const error = await rejection(speak(voice));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect(upstream.requests).toEqual([]);
  });

  it('takes ids of letters, digits, _ and - up to 64 characters', async () => {
    const result = await speak('JBFqnCBsd6RMkjVDRZzb');
    for await (const _chunk of result.audio);
    expect(upstream.requests[0]!.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
  });

  it.each([
    ['ElevenLabs code voice_not_found', 'error-voice-not-found-code.json'],
    ['no code at all', 'error-route-not-found.json'],
  ])('answers a 404 with %s for the caller voice as a 400 naming voice', async (_what, fixture) => {
    upstream.enqueue({ kind: 'error', status: 404, fixture });
    const error = await rejection(speak('JBFqnCBsd6RMkjVDRZzb'));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'voice' });
    expect((error as Error).message).not.toContain('upstream-secret-marker');
  });

  it("keeps a 404 naming something else than the voice the deployment's failure", async () => {
    upstream.enqueue({ kind: 'error', status: 404, fixture: 'error-model-not-found.json' });
    const error = await rejection(speak('JBFqnCBsd6RMkjVDRZzb'));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 404, providerCode: 'model_not_found', retryable: false });
  });

  it("keeps a 404 for the deployment's default voice the deployment's failure", async () => {
    upstream.enqueue({ kind: 'error', status: 404, fixture: 'error-voice-not-found-code.json' });
    const error = await rejection(speak(undefined));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 404, providerCode: 'voice_not_found' });
  });
});

describe('elevenlabs error codes', () => {
  it('reads detail.code, falling back to the legacy detail.status, never the message', () => {
    expect(errorCodeOf(readFixture('error-model-not-found.json'))).toBe('model_not_found');
    expect(errorCodeOf('{"detail":{"code":"quota_exceeded","status":"legacy_value"}}')).toBe(
      'quota_exceeded',
    );
    expect(errorCodeOf('{"detail":{"status":"voice_not_found","message":"secret"}}')).toBe('voice_not_found');
    expect(errorCodeOf('{"detail":{"code":"has spaces","status":"voice_not_found"}}')).toBe(
      'voice_not_found',
    );
  });
});

describe('the default voice_id in the configuration', () => {
  const load = (voice: string) =>
    parseConfig(
      `model_list:\n  - model_name: talk\n    params: { provider: elevenlabs, model: eleven_v3, api_key: k }\n    model_info: { mode: audio_speech, default_params: { voice_id: ${JSON.stringify(voice)} } }\n`,
      { path: undefined, env: {}, dataDir: '/tmp/switchboard-voices', source: 'voices.yaml' },
    );

  it('refuses a voice_id that is not a plain id at start, naming its path', () => {
    for (const voice of ['../v1/speech-to-text', 'a b', '']) {
      expect(() => load(voice), voice).toThrow(ConfigError);
      try {
        load(voice);
      } catch (error) {
        expect((error as ConfigError).message).toContain('model_list[0].model_info.default_params.voice_id');
      }
    }
    expect(load('JBFqnCBsd6RMkjVDRZzb').model_list[0]!.model_info.default_params?.voice_id).toBe(
      'JBFqnCBsd6RMkjVDRZzb',
    );
  });
});
