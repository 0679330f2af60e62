/**
 * One conformance suite for every speech capability (STYLE convention 13; openai, azure, elevenlabs):
 * the audio is handed on in order as it arrives, the first bytes are held to the request deadline, a
 * break mid-answer is an UpstreamError, the input's code points are billed, failures are classified
 * from the status without relaying the provider's body, an answer that is not audio is a protocol
 * error, and a caller who leaves aborts the upstream call. Each provider brings its fake upstream
 * behind one scenario vocabulary.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SpeechRequest } from '../../src/canonical/modalities.ts';
import type {
  DeploymentSettings,
  ProviderFactory,
  SpeechCapability,
} from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { failure, settingsFor, waitUntil } from './provider-adapter-suite.ts';

/** What a fake speech upstream answers to one call. */
export type SpeechScenario =
  /** These audio pieces, then the end. */
  | { kind: 'audio'; pieces: Buffer[] }
  /** These audio pieces (none: only the headers), then nothing until the caller leaves. */
  | { kind: 'stall'; pieces: Buffer[] }
  /** These audio pieces, then the connection is destroyed. */
  | { kind: 'break'; pieces: Buffer[] }
  /** An error status with the provider's error body (carrying the case's secret). */
  | { kind: 'error'; status: number; retryAfterSeconds?: number }
  /** 200 with JSON instead of audio. */
  | { kind: 'not-audio' };

export interface FakeSpeechUpstream {
  readonly origin: string;
  /** Each call received, with whether the caller left before the answer ended. */
  readonly requests: ReadonlyArray<{ aborted: boolean }>;
  enqueue(scenario: SpeechScenario): void;
  reset(): void;
  close(): Promise<void>;
}

export interface SpeechAdapterCase {
  name: string;
  factory: ProviderFactory;
  startUpstream(): Promise<FakeSpeechUpstream>;
  /** Params of a deployment served by the fake at `origin`. */
  params(origin: string): Record<string, unknown>;
  /** A request the fake accepts, in a format the adapter hands on byte for byte. */
  request: SpeechRequest;
  /** Checks path, authentication and the input of one recorded call. */
  expectEndpoint(seen: unknown, input: string): void;
  /** A marker every error body of the fake carries. */
  secret: string;
  /** Whether the fake's 429 carries a Retry-After the adapter reads. */
  sendsRetryAfter: boolean;
}

const context = (signal = new AbortController().signal, deadline?: number) => ({
  signal,
  requestId: 'req-speech',
  ...(deadline !== undefined ? { deadline } : {}),
});

export function runSpeechAdapterSuite(adapterCase: SpeechAdapterCase): void {
  describe(`speech capability conformance: ${adapterCase.name}`, () => {
    let upstream: FakeSpeechUpstream;
    let speech: SpeechCapability;
    let close: () => Promise<void>;
    const make = (overrides: Partial<DeploymentSettings['timeouts']> = {}) => {
      const adapter = adapterCase.factory.create(settingsFor(adapterCase.params(upstream.origin), overrides));
      if (!adapter.speech) throw new Error('the adapter declares no speech capability');
      return { speech: adapter.speech, close: () => adapter.close() };
    };
    const request = (input = adapterCase.request.input) => ({ ...adapterCase.request, input });

    beforeAll(async () => {
      upstream = await adapterCase.startUpstream();
      ({ speech, close } = make());
    });
    afterAll(async () => {
      await close?.();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    it('accepts its own params', () => {
      expect(adapterCase.factory.validate(adapterCase.params('http://127.0.0.1:1'))).toEqual([]);
    });

    it('hands on the audio bytes in order and bills the code points of input', async () => {
      const pieces = [
        Buffer.from([0xff, 0xfb, 0x90, 0x64]),
        Buffer.from([0, 1, 2, 0x0d, 0x0a]),
        Buffer.from('end'),
      ];
      upstream.enqueue({ kind: 'audio', pieces });
      const input = 'Grüße 😀 ok';
      const result = await speech.speak(request(input), context());
      expect(result.units).toEqual({ characters: 10 });
      const received: Buffer[] = [];
      for await (const chunk of result.audio) received.push(chunk);
      expect(Buffer.concat(received)).toEqual(Buffer.concat(pieces));
      adapterCase.expectEndpoint((upstream.requests as unknown[])[0], input);
    });

    it('hands on the first bytes while the upstream still holds the rest (streamed, not collected)', async () => {
      upstream.enqueue({ kind: 'stall', pieces: [Buffer.from('first audio bytes')] });
      const controller = new AbortController();
      const result = await speech.speak(request(), context(controller.signal));
      const iterator = result.audio[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.done).toBe(false);
      expect(first.value.toString('latin1')).toContain('first audio bytes');
      controller.abort();
      await iterator.return?.();
      await waitUntil(() => upstream.requests[0]!.aborted);
    });

    it('holds the first audio bytes to the request deadline: none in time is a retryable timeout', async () => {
      upstream.enqueue({ kind: 'stall', pieces: [] });
      const result = await speech.speak(request(), context(undefined, Date.now() + 200));
      const error = await failure(drain(result.audio));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await waitUntil(() => upstream.requests[0]!.aborted);
    });

    it('ends the audio with an UpstreamError when the connection breaks mid-answer', async () => {
      upstream.enqueue({ kind: 'break', pieces: [Buffer.from('partial audio')] });
      const result = await speech.speak(request(), context());
      const received: Buffer[] = [];
      let error: unknown;
      try {
        for await (const chunk of result.audio) received.push(chunk);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UpstreamError);
      expect(Buffer.concat(received).toString('latin1')).toContain('partial audio');
    });

    it('classifies 5xx and 429 as retryable and 400, 401 as not, never keeping the body', async () => {
      for (const status of [500, 503, 429, 400, 401]) {
        upstream.enqueue({ kind: 'error', status });
        const error = await failure(speech.speak(request(), context()));
        expect(error, String(status)).toMatchObject({
          kind: 'status',
          status,
          retryable: status >= 500 || status === 429,
        });
        expect(JSON.stringify({ ...error, message: error.message })).not.toContain(adapterCase.secret);
      }
    });

    it("reads a 429's retry hint", async () => {
      upstream.enqueue({ kind: 'error', status: 429, retryAfterSeconds: 7 });
      const error = await failure(speech.speak(request(), context()));
      if (adapterCase.sendsRetryAfter) expect(error.retryAfterMs).toBe(7_000);
      else expect(error.retryable).toBe(true);
    });

    it('refuses an answer that is not audio as a retryable protocol error', async () => {
      upstream.enqueue({ kind: 'not-audio' });
      expect(await failure(speech.speak(request(), context()))).toMatchObject({
        kind: 'protocol',
        retryable: true,
      });
    });

    it('aborts the upstream call when the caller leaves while the audio streams', async () => {
      upstream.enqueue({ kind: 'stall', pieces: [Buffer.from('some audio')] });
      const controller = new AbortController();
      const result = await speech.speak(request(), context(controller.signal));
      const pending = drain(result.audio);
      await waitUntil(() => upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => upstream.requests[0]!.aborted);
    });
  });
}

async function drain(audio: AsyncIterable<Buffer>): Promise<void> {
  for await (const _chunk of audio);
}
