/**
 * ElevenLabs deployments driven by the official `openai` SDK through a real gateway (spec rules 7 and
 * 8): speech as mp3 and as WAV (the PCM wrapped by the adapter, its placeholder sizes rewritten by the
 * route, checked by parsing the file), and transcription as json, verbose_json and SRT. Caller
 * mistakes (no voice, an unknown voice, aac) are 400s naming the field that leave the deployment
 * healthy: with allowed_fails 1, one counted failure would cool the only deployment down.
 */
import OpenAI, { BadRequestError, toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AWKWARD_AUDIO } from '../fakes/elevenlabs/elevenlabs-requests.ts';
import {
  FAKE_API_KEY,
  FakeElevenLabsServer,
  mp3For,
  pcmFor,
} from '../fakes/elevenlabs/fake-elevenlabs-server.ts';
import { backendFactories } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

/** The SDK types `voice` as required; JSON leaves an undefined one out, as a caller omitting it would. */
const NO_VOICE = undefined as unknown as string;

describe('elevenlabs through the openai SDK', () => {
  const backend = backendFactories[0]![1]();
  let upstream: FakeElevenLabsServer;
  let gateway: TestGateway;
  let openai: OpenAI;

  beforeAll(async () => {
    upstream = await FakeElevenLabsServer.start();
    const params = `provider: elevenlabs, api_base: "${upstream.origin}", api_key: ${FAKE_API_KEY}`;
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: narrator
    params: { ${params}, model: eleven_multilingual_v2 }
    model_info: { id: narrator-el, mode: audio_speech, default_params: { voice_id: voice-from-config } }
  - model_name: narrator-bare
    params: { ${params}, model: eleven_flash_v2_5 }
    model_info: { id: narrator-bare-el, mode: audio_speech }
  - model_name: scribe
    params: { ${params}, model: scribe_v1 }
    model_info: { id: scribe-el, mode: audio_transcription }
router_settings: { allowed_fails: 1, cooldown_time: 600, num_retries: 0 }
`,
    });
    const key = await gateway.createKey({ models: ['narrator', 'narrator-bare', 'scribe'] });
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend.cleanup();
  });
  beforeEach(() => upstream.reset());

  describe('speech (spec rule 7)', () => {
    it('streams mp3 bytes spoken by the voice the caller named', async () => {
      const input = 'Hello from the gateway';
      const response = await openai.audio.speech.create({
        model: 'narrator',
        input,
        voice: 'JBFqnCBsd6RMkjVDRZzb',
      });
      expect(response.headers.get('content-type')).toBe('audio/mpeg');
      expect(Buffer.from(await response.arrayBuffer())).toEqual(mp3For(input));
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
      expect(seen.query.output_format).toBe('mp3_44100_128');
      expect(seen.headers['xi-api-key']).toBe(FAKE_API_KEY);
      expect(seen.json).toEqual({ text: input, model_id: 'eleven_multilingual_v2' });
    });

    it("answers a playable WAV in the deployment's default voice, its sizes rewritten", async () => {
      const input = 'A wave of sound';
      const response = await openai.audio.speech.create({
        model: 'narrator',
        input,
        voice: NO_VOICE,
        response_format: 'wav',
        speed: 1.1,
      });
      expect(response.headers.get('content-type')).toBe('audio/wav');
      const wav = Buffer.from(await response.arrayBuffer());
      const pcm = pcmFor(input);
      expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
      expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
      expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
      expect(wav.readUInt16LE(20)).toBe(1); // PCM
      expect(wav.readUInt16LE(22)).toBe(1); // mono
      expect(wav.readUInt32LE(24)).toBe(24_000);
      expect(wav.readUInt16LE(34)).toBe(16);
      expect(wav.toString('ascii', 36, 40)).toBe('data');
      expect(wav.readUInt32LE(40)).toBe(pcm.length);
      expect(wav.subarray(44)).toEqual(pcm);
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/v1/text-to-speech/voice-from-config/stream');
      expect(seen.query.output_format).toBe('pcm_24000');
      expect(seen.json.voice_settings).toEqual({ speed: 1.1 });
    });

    it('refuses a missing voice as a 400 naming voice, and the deployment keeps serving', async () => {
      const error = await openai.audio.speech
        .create({ model: 'narrator-bare', input: 'hi', voice: NO_VOICE })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'voice' });
      expect(upstream.requests).toEqual([]);
      const next = await openai.audio.speech.create({
        model: 'narrator-bare',
        input: 'hi',
        voice: 'JBFqnCBsd6RMkjVDRZzb',
      });
      expect(next.status).toBe(200);
      await next.arrayBuffer();
    });

    it('refuses an unknown voice as a 400 naming voice without the upstream body, and the deployment keeps serving', async () => {
      const error = await openai.audio.speech
        .create({ model: 'narrator-bare', input: 'hi', voice: 'alloy' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'voice' });
      expect(JSON.stringify((error as BadRequestError).error)).not.toContain('upstream-secret-marker');
      const next = await openai.audio.speech.create({
        model: 'narrator-bare',
        input: 'again',
        voice: 'JBFqnCBsd6RMkjVDRZzb',
      });
      expect(Buffer.from(await next.arrayBuffer())).toEqual(mp3For('again'));
    });

    it('refuses aac as a 400 naming response_format', async () => {
      const error = await openai.audio.speech
        .create({ model: 'narrator', input: 'hi', voice: NO_VOICE, response_format: 'aac' })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400, param: 'response_format' });
      expect((error as Error).message).toContain('mp3, opus, pcm, wav');
    });
  });

  describe('transcription (spec rule 8)', () => {
    const file = () => toFile(AWKWARD_AUDIO, 'meeting.wav', { type: 'audio/wav' });

    it('answers json with the text, mapping language and temperature and uploading the file intact', async () => {
      const answer = await openai.audio.transcriptions.create({
        model: 'scribe',
        file: await file(),
        language: 'en',
        temperature: 0.2,
      });
      expect(answer).toEqual({ text: "Good morning, everyone. (laughter) Let's begin the review." });
      const form = upstream.requests[0]!.form!;
      expect(form.fields).toEqual({
        model_id: 'scribe_v1',
        language_code: 'en',
        temperature: '0.2',
        timestamps_granularity: 'word',
      });
      expect(form.file).toEqual({ filename: 'meeting.wav', bytes: AWKWARD_AUDIO });
    });

    it('answers verbose_json with language, duration, words and segments', async () => {
      const answer = await openai.audio.transcriptions.create({
        model: 'scribe',
        file: await file(),
        response_format: 'verbose_json',
      });
      expect(answer).toMatchObject({ language: 'eng', duration: 4.95 });
      expect(answer.words?.map((word) => word.word)).toEqual([
        'Good',
        'morning,',
        'everyone.',
        "Let's",
        'begin',
        'the',
        'review.',
      ]);
      expect(answer.segments?.map((segment) => [segment.start, segment.end, segment.text])).toEqual([
        [0.12, 1.4, 'Good morning, everyone.'],
        [1.52, 2.3, '(laughter)'],
        [3.6, 4.95, "Let's begin the review."],
      ]);
    });

    it('answers srt cues from the segments', async () => {
      const srt = await openai.audio.transcriptions.create({
        model: 'scribe',
        file: await file(),
        response_format: 'srt',
      });
      expect(srt.trim().split(/\n\n/)).toEqual([
        '1\n00:00:00,120 --> 00:00:01,400\nGood morning, everyone.',
        '2\n00:00:01,520 --> 00:00:02,300\n(laughter)',
        "3\n00:00:03,600 --> 00:00:04,950\nLet's begin the review.",
      ]);
    });
  });
});
