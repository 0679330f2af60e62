/**
 * One conformance suite for every embeddings capability (STYLE convention 13): those that translate to a
 * provider's own embedding API (cohere, gemini, bedrock Titan and Cohere-on-Bedrock) and the OpenAI-style
 * ones that speak OpenAI's (openai, azure). Each provider brings a fake upstream that answers every text
 * with `fakeVector(text)` (and, when the provider reports tokens, `fakeTokens(text)` of them), so order,
 * batching, encoding, usage and failures are checked with one set of rules.
 */
import { describe, expect, it } from 'vitest';
import type { EmbeddingRequest } from '../../src/canonical/modalities.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import {
  base64ToFloats,
  encodeEmbeddingResponse,
} from '../../src/wire/embeddings/encode-embedding-response.ts';
import type { RecordedRequest } from '../fakes/loopback-server.ts';
import { capabilityUnderTest, type SuiteUpstream } from './capability-suite-kit.ts';
import { refusal } from './gateway-refusal.ts';
import { failure, waitUntil } from './provider-adapter-suite.ts';

/** What a fake embeddings upstream answers to one call besides its vectors (the default). */
export type EmbeddingScenario =
  /** The provider's native error shape; `secret` goes in its message, `retryAfterSeconds` in its retry hint. */
  | { kind: 'error'; status: number; retryAfterSeconds?: number; secret?: string }
  /** 200 with HTML instead of JSON. */
  | { kind: 'garbage' }
  /** Well-formed JSON of the provider's shape with one vector fewer than the texts of the call. */
  | { kind: 'short-embeddings' }
  /** Accepts the call and never answers. */
  | { kind: 'hang' };

export type FakeEmbeddingsUpstream = SuiteUpstream<EmbeddingScenario, RecordedRequest>;

export interface EmbeddingsAdapterCase {
  name: string;
  factory: ProviderFactory;
  startUpstream(): Promise<FakeEmbeddingsUpstream>;
  /** Params of a deployment served by the fake at `origin`. */
  params(origin: string): Record<string, unknown>;
  /** Checks method, path and authentication of one recorded call. */
  expectEndpoint(seen: RecordedRequest): void;
  /** The inputs one recorded call carried (texts, or token arrays where they are sent). */
  textsOf(seen: RecordedRequest): unknown[];
  /** Most texts the adapter sends in one call; undefined when every input goes in one call (OpenAI's API). */
  batchSize: number | undefined;
  /** Token arrays go upstream as they came (OpenAI's API), instead of a 400 naming input. */
  takesTokenArrays?: boolean;
  /**
   * The encoding asked upstream: none (the default: the adapter gets floats and the wire encoder writes
   * base64), `base64` whatever the caller asked (OpenAI, Azure), or the caller's.
   */
  upstreamEncoding?: 'none' | 'base64' | 'caller';
  /** Whether the provider reports input tokens (else the answer carries no usage). */
  reportsTokens: boolean;
  /** Whether the provider's 429 carries a retry hint the adapter reads. */
  sendsRetryAfter: boolean;
}

/** The vector the fakes answer for a text: exact in float32, different per text and position-free. */
export function fakeVector(text: string): number[] {
  return [text.length, (text.codePointAt(0) ?? 0) / 1024, 0.25];
}

/** The input tokens the fakes report for a text. */
export function fakeTokens(text: string): number {
  return text.split(' ').length + 1;
}

const context = () => ({ signal: new AbortController().signal, requestId: 'req-embed' });

/** A vector of an answer as floats, whichever encoding it came in. */
const floatsOf = (embedding: number[] | string) =>
  typeof embedding === 'string' ? base64ToFloats(embedding) : embedding;

export function runEmbeddingsAdapterSuite(adapterCase: EmbeddingsAdapterCase): void {
  describe(`embeddings capability conformance: ${adapterCase.name}`, () => {
    const tested = capabilityUnderTest(adapterCase, 'embeddings', (adapter) => adapter.embeddings);
    const request = (input: EmbeddingRequest['input'], extra: Partial<EmbeddingRequest> = {}) => ({
      model: String(adapterCase.params('http://127.0.0.1:1').model),
      input,
      ...extra,
    });
    const embed = (input: EmbeddingRequest['input'], extra?: Partial<EmbeddingRequest>) =>
      tested.capability.embed(request(input, extra), context());

    it('embeds a list of texts in input order, sending them to the right path with credentials', async () => {
      const texts = ['first text', 'B', 'the third one'];
      const { response, usage } = await embed(texts);
      expect(response.data.map((item) => item.index)).toEqual([0, 1, 2]);
      expect(response.data.map((item) => floatsOf(item.embedding))).toEqual(texts.map(fakeVector));
      expect(tested.upstream.requests.flatMap((seen) => adapterCase.textsOf(seen))).toEqual(texts);
      for (const seen of tested.upstream.requests) adapterCase.expectEndpoint(seen);
      const tokens = texts.reduce((sum, text) => sum + fakeTokens(text), 0);
      if (adapterCase.reportsTokens) {
        expect(usage).toEqual({ prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens });
        expect(response.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
      } else {
        expect(usage).toBeUndefined();
        expect(response.usage).toBeUndefined();
      }
    });

    it('embeds a single string as one input', async () => {
      const { response } = await embed('just one');
      expect(response.data).toHaveLength(1);
      expect(response.data[0]).toMatchObject({ object: 'embedding', index: 0 });
      expect(floatsOf(response.data[0]!.embedding)).toEqual(fakeVector('just one'));
    });

    const batchSize = adapterCase.batchSize;
    if (batchSize !== undefined) {
      it('splits more texts than one call takes into several calls, keeping input order', async () => {
        const count = batchSize * 2 + 1;
        const texts = Array.from({ length: count }, (_, index) => `${'x'.repeat(index % 7)}text ${index}`);
        const { response } = await embed(texts);
        expect(tested.upstream.requests).toHaveLength(3);
        expect(response.data.map((item) => floatsOf(item.embedding))).toEqual(texts.map(fakeVector));
        expect(response.data.map((item) => item.index)).toEqual(texts.map((_, index) => index));
      });
    } else {
      it('sends every input in one call, up to the 2048 a request may hold, keeping input order', async () => {
        const texts = Array.from({ length: 2048 }, (_, index) => `${'x'.repeat(index % 7)}text ${index}`);
        const { response } = await embed(texts);
        expect(tested.upstream.requests).toHaveLength(1);
        expect(response.data.map((item) => floatsOf(item.embedding))).toEqual(texts.map(fakeVector));
      });
    }

    it("answers the caller's encoding through the wire encoder, asking upstream as the adapter declares", async () => {
      for (const encoding of ['float', 'base64', undefined] as const) {
        tested.upstream.reset();
        const asked = request(['alpha', 'beta'], encoding ? { encoding_format: encoding } : {});
        const result = await tested.capability.embed(asked, context());
        const answer = JSON.parse(encodeEmbeddingResponse(result, asked)) as {
          data: Array<{ embedding: number[] | string }>;
          model: string;
        };
        const vectors = answer.data.map((item) => item.embedding);
        if (encoding === 'base64') expect(vectors.every((vector) => typeof vector === 'string')).toBe(true);
        else expect(vectors.every(Array.isArray)).toBe(true);
        expect(vectors.map(floatsOf)).toEqual([fakeVector('alpha'), fakeVector('beta')]);
        expect(answer.model).toBe(asked.model);
        const sent = tested.upstream.requests[0]!.body;
        if ((adapterCase.upstreamEncoding ?? 'none') === 'none')
          expect(JSON.stringify(sent)).not.toContain('base64');
        else
          expect(sent.encoding_format, String(encoding)).toBe(
            adapterCase.upstreamEncoding === 'base64' ? 'base64' : encoding,
          );
      }
    });

    if (adapterCase.takesTokenArrays) {
      it('sends token arrays upstream as they came, one vector each', async () => {
        const input = [[1, 2], [3]];
        const { response } = await embed(input);
        expect(adapterCase.textsOf(tested.upstream.requests[0]!)).toEqual(input);
        expect(response.data).toHaveLength(2);
      });
    } else {
      it('refuses token arrays with a 400 naming input, without calling the upstream', async () => {
        for (const input of [
          [1, 2, 3],
          [[1, 2], [3]],
        ] as EmbeddingRequest['input'][]) {
          const error = await refusal(embed(input));
          expect(error).toMatchObject({ status: 400, param: 'input' });
        }
        expect(tested.upstream.requests).toHaveLength(0);
      });
    }

    it('classifies 5xx, 408 and 429 as retryable and 400, 401, 403, 404 as not', async () => {
      for (const status of [500, 503, 408, 429]) {
        tested.upstream.enqueue({ kind: 'error', status });
        expect((await failure(embed(['a']))).retryable, String(status)).toBe(true);
      }
      for (const status of [400, 401, 403, 404]) {
        tested.upstream.enqueue({ kind: 'error', status });
        const error = await failure(embed(['a']));
        expect(error).toMatchObject({ kind: 'status', status, retryable: false });
      }
    });

    it('reads the retry hint of a 429 and never relays the error body', async () => {
      tested.upstream.enqueue({
        kind: 'error',
        status: 429,
        retryAfterSeconds: 7,
        secret: 'sk-upstream-leak',
      });
      const error = await failure(embed(['a']));
      expect(error).toMatchObject({ kind: 'status', status: 429, retryable: true });
      if (adapterCase.sendsRetryAfter) expect(error.retryAfterMs).toBe(7_000);
      expect(JSON.stringify({ ...error, message: error.message })).not.toContain('sk-upstream-leak');
    });

    it('treats an answer that is not the wire format, or misses a vector, as a protocol error', async () => {
      tested.upstream.enqueue({ kind: 'garbage' });
      expect(await failure(embed(['a', 'b']))).toMatchObject({
        kind: 'protocol',
        retryable: true,
      });
      tested.upstream.enqueue({ kind: 'short-embeddings' });
      expect(await failure(embed(['a', 'b']))).toMatchObject({
        kind: 'protocol',
      });
    });

    it('fails the whole request when one of its calls fails', async () => {
      const texts = Array.from({ length: (adapterCase.batchSize ?? 1) + 1 }, (_, index) => `t${index}`);
      tested.upstream.enqueue({ kind: 'error', status: 500 });
      const error = await failure(embed(texts));
      expect(error).toMatchObject({ status: 500, retryable: true });
    });

    it('aborts the upstream call when the caller goes away', async () => {
      tested.upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const pending = tested.capability.embed(request(['a']), { signal: controller.signal, requestId: 'r' });
      await waitUntil(() => tested.upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => tested.upstream.requests[0]!.aborted);
    });

    it('times out an upstream that sends no headers, as a retryable timeout', async () => {
      const impatient = tested.make({ headersMs: 150, totalMs: 150 });
      tested.upstream.enqueue({ kind: 'hang' });
      const error = await failure(impatient.capability.embed(request(['a']), context()));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await impatient.close();
    });
  });
}
