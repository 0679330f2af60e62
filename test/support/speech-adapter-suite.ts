/**
 * One conformance suite for every speech capability (STYLE convention 13; openai, azure, elevenlabs):
 * the audio is handed on in order as it arrives, the first bytes are held to the request deadline, a
 * break mid-answer is an UpstreamError, the input's code points are billed, failures are classified
 * from the status without relaying the provider's body, an answer that is not audio is a protocol
 * error, and a caller who leaves aborts the upstream call. Each provider brings its fake upstream
 * behind one scenario vocabulary.
 */
import { describe, expect, it } from 'vitest';
import type { SpeechRequest } from '../../src/canonical/modalities.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import {
  capabilityUnderTest,
  type ErrorScenario,
  itClassifiesErrorStatuses,
  type SuiteUpstream,
} from './capability-suite-kit.ts';
import { failure, waitUntil } from './provider-adapter-suite.ts';

/** What a fake speech upstream answers to one call. */
export type SpeechScenario =
  /** These audio pieces, then the end. */
  | { kind: 'audio'; pieces: Buffer[] }
  /** These audio pieces (none: only the headers), then nothing until the caller leaves. */
  | { kind: 'stall'; pieces: Buffer[] }
  /** These audio pieces, then the connection is destroyed. */
  | { kind: 'break'; pieces: Buffer[] }
  /** An error status with the provider's error body (carrying the case's secret). */
  | ErrorScenario
  /** 200 with JSON instead of audio. */
  | { kind: 'not-audio' };

export type FakeSpeechUpstream = SuiteUpstream<SpeechScenario>;

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

const context = (signal?: AbortSignal, deadline?: number) => ({
  signal: signal ?? new AbortController().signal,
  requestId: 'req-speech',
  ...(deadline !== undefined ? { deadline } : {}),
});

export function runSpeechAdapterSuite(adapterCase: SpeechAdapterCase): void {
  describe(`speech capability conformance: ${adapterCase.name}`, () => {
    const tested = capabilityUnderTest(adapterCase, 'speech', (adapter) => adapter.speech);
    const request = (input = adapterCase.request.input) => ({ ...adapterCase.request, input });
    const speak = (input?: string, signal?: AbortSignal, deadline?: number) =>
      tested.capability.speak(request(input), context(signal, deadline));

    it('hands on the audio bytes in order and bills the code points of input', async () => {
      const pieces = [
        Buffer.from([0xff, 0xfb, 0x90, 0x64]),
        Buffer.from([0, 1, 2, 0x0d, 0x0a]),
        Buffer.from('end'),
      ];
      tested.upstream.enqueue({ kind: 'audio', pieces });
      const input = 'Grüße 😀 ok';
      const result = await speak(input);
      expect(result.units).toEqual({ characters: 10 });
      const received: Buffer[] = [];
      for await (const chunk of result.audio) received.push(chunk);
      expect(Buffer.concat(received)).toEqual(Buffer.concat(pieces));
      adapterCase.expectEndpoint((tested.upstream.requests as unknown[])[0], input);
    });

    it('hands on the first bytes while the upstream still holds the rest (streamed, not collected)', async () => {
      tested.upstream.enqueue({ kind: 'stall', pieces: [Buffer.from('first audio bytes')] });
      const controller = new AbortController();
      const result = await speak(undefined, controller.signal);
      const iterator = result.audio[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.done).toBe(false);
      expect(first.value.toString('latin1')).toContain('first audio bytes');
      controller.abort();
      await iterator.return?.();
      await waitUntil(() => tested.upstream.requests[0]!.aborted);
    });

    it('holds the first audio bytes to the request deadline: none in time is a retryable timeout', async () => {
      tested.upstream.enqueue({ kind: 'stall', pieces: [] });
      const result = await speak(undefined, undefined, Date.now() + 200);
      const error = await failure(drain(result.audio));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await waitUntil(() => tested.upstream.requests[0]!.aborted);
    });

    it('ends the audio with an UpstreamError when the connection breaks mid-answer', async () => {
      tested.upstream.enqueue({ kind: 'break', pieces: [Buffer.from('partial audio')] });
      const result = await speak();
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

    itClassifiesErrorStatuses(() => ({
      enqueue: (scenario) => tested.upstream.enqueue(scenario),
      fail: () => failure(speak()),
      secret: adapterCase.secret,
      sendsRetryAfter: adapterCase.sendsRetryAfter,
    }));

    it('refuses an answer that is not audio as a retryable protocol error', async () => {
      tested.upstream.enqueue({ kind: 'not-audio' });
      expect(await failure(speak())).toMatchObject({
        kind: 'protocol',
        retryable: true,
      });
    });

    it('aborts the upstream call when the caller leaves while the audio streams', async () => {
      tested.upstream.enqueue({ kind: 'stall', pieces: [Buffer.from('some audio')] });
      const controller = new AbortController();
      const result = await speak(undefined, controller.signal);
      const pending = drain(result.audio);
      await waitUntil(() => tested.upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => tested.upstream.requests[0]!.aborted);
    });
  });
}

async function drain(audio: AsyncIterable<Buffer>): Promise<void> {
  for await (const _chunk of audio);
}
