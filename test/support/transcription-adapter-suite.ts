/**
 * One conformance suite for every transcription capability (STYLE convention 13; openai, azure,
 * elevenlabs): the upload reaches the provider byte for byte with the caller's language, the answer
 * becomes every public format through the wire encoder with the audio seconds billed when the
 * duration is known, failures are classified from the status without relaying the provider's body,
 * an answer that is not a transcript is a protocol error, a silent upstream times out, and a caller
 * who leaves aborts the upstream call. Each provider brings its fake upstream behind one vocabulary.
 */
import { describe, expect, it } from 'vitest';
import type {
  TranscriptionFormat,
  TranscriptionRequest,
  UploadedFile,
} from '../../src/canonical/modalities.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { encodeTranscription } from '../../src/wire/audio/encode-transcription.ts';
import {
  capabilityUnderTest,
  type ErrorScenario,
  itClassifiesErrorStatuses,
  type SuiteUpstream,
} from './capability-suite-kit.ts';
import { failure, waitUntil } from './provider-adapter-suite.ts';

/** What a fake transcription upstream answers to one call besides its transcript (the default). */
export type TranscriptionScenario =
  /** An error status with the provider's error body (carrying the case's secret). */
  | ErrorScenario
  /** 200 with a body that is not the provider's transcript. */
  | { kind: 'malformed' }
  /** Reads the upload and never answers. */
  | { kind: 'hang' };

export type FakeTranscriptionUpstream = SuiteUpstream<TranscriptionScenario>;

export interface TranscriptionAdapterCase {
  name: string;
  factory: ProviderFactory;
  startUpstream(): Promise<FakeTranscriptionUpstream>;
  /** Params of a deployment served by the fake at `origin`. */
  params(origin: string): Record<string, unknown>;
  /** Checks path and authentication of one recorded call. */
  expectEndpoint(seen: unknown): void;
  /** The file bytes and the text fields one recorded call carried. */
  uploadOf(seen: unknown): { bytes: Buffer | undefined; fields: Record<string, string> };
  /** The form field the caller's `language` goes to. */
  languageField: string;
  /** The seconds of audio the fake's transcript covers. */
  durationSeconds: number;
  /** A marker every error body of the fake carries. */
  secret: string;
  /** Whether the fake's 429 carries a Retry-After the adapter reads. */
  sendsRetryAfter: boolean;
}

/** Bytes a multipart encoder could get wrong: NUL, 0xFF, CRLF and a boundary-like `--`. */
const AWKWARD_AUDIO = Buffer.from([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0x80]);

function upload(bytes: Buffer): UploadedFile {
  return {
    filename: 'meeting.wav',
    contentType: 'audio/wav',
    bytes: bytes.length,
    blob: async () => new Blob([new Uint8Array(bytes)], { type: 'audio/wav' }),
  };
}

const context = (signal = new AbortController().signal) => ({ signal, requestId: 'req-transcribe' });

export function runTranscriptionAdapterSuite(adapterCase: TranscriptionAdapterCase): void {
  describe(`transcription capability conformance: ${adapterCase.name}`, () => {
    const tested = capabilityUnderTest(adapterCase, 'transcription', (adapter) => adapter.transcription);
    const request = (
      format: TranscriptionFormat = 'verbose_json',
      extra: Partial<TranscriptionRequest> = {},
    ): TranscriptionRequest => ({
      model: String(adapterCase.params('http://127.0.0.1:1').model),
      file: upload(AWKWARD_AUDIO),
      response_format: format,
      extra: [],
      ...extra,
    });
    const transcribe = (format?: TranscriptionFormat, extra?: Partial<TranscriptionRequest>) =>
      tested.capability.transcribe(request(format, extra), context());

    it("uploads the file byte for byte (NUL, 0xFF, CRLF, a boundary-like --) with the caller's language", async () => {
      await transcribe('json', { language: 'en' });
      const seen = (tested.upstream.requests as unknown[])[0];
      adapterCase.expectEndpoint(seen);
      const { bytes, fields } = adapterCase.uploadOf(seen);
      expect(bytes).toEqual(AWKWARD_AUDIO);
      expect(fields[adapterCase.languageField]).toBe('en');
    });

    it('answers json and verbose_json through the wire encoder, billing the seconds it covers', async () => {
      const json = await transcribe('json');
      const text = (JSON.parse(encodeTranscription(json, 'json').body) as { text?: unknown }).text;
      expect(typeof text === 'string' && text.length > 0).toBe(true);
      const verbose = await transcribe('verbose_json');
      const written = JSON.parse(encodeTranscription(verbose, 'verbose_json').body);
      expect(written).toMatchObject({ text, duration: adapterCase.durationSeconds });
      expect(verbose.units).toEqual({ audioSeconds: adapterCase.durationSeconds });
    });

    it('answers text, srt and vtt through the wire encoder', async () => {
      const written = async (format: TranscriptionFormat) =>
        encodeTranscription(await transcribe(format), format).body;
      expect((await written('text')).trim().length).toBeGreaterThan(0);
      expect(await written('srt')).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}/);
      expect(await written('vtt')).toMatch(/^WEBVTT\r?\n\r?\n(.*\r?\n)?\d\d:\d\d:\d\d\.\d{3} --> /);
    });

    itClassifiesErrorStatuses(() => ({
      enqueue: (scenario) => tested.upstream.enqueue(scenario),
      fail: () => failure(transcribe()),
      secret: adapterCase.secret,
      sendsRetryAfter: adapterCase.sendsRetryAfter,
    }));

    it('refuses an answer that is not a transcript as a retryable protocol error', async () => {
      tested.upstream.enqueue({ kind: 'malformed' });
      expect(await failure(transcribe('json'))).toMatchObject({
        kind: 'protocol',
        retryable: true,
      });
    });

    it('aborts the upstream call when the caller leaves', async () => {
      tested.upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const pending = tested.capability.transcribe(request(), context(controller.signal));
      await waitUntil(() => tested.upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => tested.upstream.requests[0]!.aborted);
    });

    it('times out an upstream that answers nothing, as a retryable timeout', async () => {
      const impatient = tested.make({ headersMs: 150, totalMs: 150 });
      tested.upstream.enqueue({ kind: 'hang' });
      const error = await failure(impatient.capability.transcribe(request(), context()));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await impatient.close();
    });
  });
}
