/**
 * One conformance suite for every ProviderAdapter that translates the canonical chat model to a
 * provider's own wire format (anthropic, gemini, bedrock; STYLE convention 13). Each provider brings a
 * fake upstream speaking its native format and a `view` that reads what that upstream received in
 * provider-neutral terms, so the suite checks both directions of the translation with one set of rules.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import type { Usage } from '../../src/canonical/usage.ts';
import type { DeploymentSettings, ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { chatAdapterOf, collect, failure, settingsFor, waitUntil } from './provider-adapter-suite.ts';

export interface RecordedNativeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as received: parsed JSON. */
  body: any;
  /** Set when the connection closed before the answer was complete (the caller aborted). */
  aborted: boolean;
}

/** What a fake native upstream answers to one request; JSON or a stream as the request asks. */
export type NativeScenario =
  /** A text answer, split into several stream events when streamed. */
  | { kind: 'text'; text: string; finish?: 'stop' | 'length' }
  /** One tool call, its arguments split over several stream events when streamed. */
  | { kind: 'tool-call'; name: string; arguments: Record<string, unknown> }
  /** Structured output: the provider's native answer to a JSON-schema request, holding `value`. */
  | { kind: 'json'; value: Record<string, unknown> }
  /**
   * An error answer in the provider's native error shape. `secret` is put in the body's message (the
   * adapter must never relay it); `retryAfterSeconds` in the provider's native retry hint.
   */
  | { kind: 'error'; status: number; retryAfterSeconds?: number; secret?: string }
  /** A stream that sends `chunksBeforeFailure` text events, then destroys the connection. */
  | { kind: 'break-stream'; chunksBeforeFailure: number }
  /** 200 with a body that is not the wire format (HTML), for JSON and stream requests alike. */
  | { kind: 'garbage' }
  /** Accepts the request and never answers. */
  | { kind: 'hang' };

export interface FakeNativeUpstream {
  readonly origin: string;
  readonly requests: RecordedNativeRequest[];
  /** Scenarios used in order, one per request; when none is queued: `{kind:'text', text:'echo: <last user text>'}`. */
  enqueue(...scenarios: NativeScenario[]): void;
  /** Forgets recorded requests and queued scenarios. */
  reset(): void;
  close(): Promise<void>;
}

/** One part of the conversation the upstream received, read in provider-neutral terms. */
export interface NativePart {
  role: 'user' | 'assistant';
  text?: string;
  toolCall?: { id?: string; name: string; arguments: unknown };
  toolResult?: { id?: string; name?: string; content: string };
}

/** A provider-neutral reading of a recorded native request. */
export interface NativeRequestView {
  system: string | undefined;
  /** Every content part of every turn, flattened in order. */
  parts: NativePart[];
  /** Names of the function tools offered. */
  tools: string[];
  maxTokens: number | undefined;
  temperature: number | undefined;
  stop: string[] | undefined;
  /** The JSON schema sent for structured output, however the provider takes it. */
  jsonSchema: unknown;
}

export interface TranslatingAdapterCase {
  name: string;
  factory: ProviderFactory;
  startUpstream(): Promise<FakeNativeUpstream>;
  /** Params of a deployment of upstream model `upstream-model` served by the fake at `origin`. */
  params(origin: string): Record<string, unknown>;
  /** Checks method, path and authentication of a recorded request. */
  expectEndpoint(seen: RecordedNativeRequest, streaming: boolean): void;
  view(seen: RecordedNativeRequest): NativeRequestView;
  /** The canonical usage of every fake answer (the fakes report fixed counts). */
  expectedUsage: Usage;
  /** Whether the provider keeps tool call ids (Gemini has none; the adapter invents them). */
  keepsToolCallIds: boolean;
  /** Whether the provider's 429 carries a retry hint the adapter reads. */
  sendsRetryAfter: boolean;
}

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** A conversation with a system prompt, a tool round trip and a follow-up question. */
const conversation: ChatRequest = {
  model: 'upstream-model',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is the weather in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
    { role: 'user', content: 'And tomorrow?' },
  ],
  tools: [weatherTool],
  max_tokens: 64,
  temperature: 0.3,
  stop: ['END'],
};

const simple: ChatRequest = {
  model: 'upstream-model',
  messages: [{ role: 'user', content: 'hello there' }],
  max_tokens: 32,
};

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: 'number' } },
  required: ['city', 'temp'],
};

const context = () => ({ signal: new AbortController().signal, requestId: 'req-1' });

function streamedText(chunks: StreamChunk[]): string {
  return chunks.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('');
}

function finishReasons(chunks: StreamChunk[]): unknown[] {
  return chunks.map((chunk) => chunk.chunk.choices[0]?.finish_reason).filter((reason) => reason);
}

export function runTranslatingAdapterSuite(adapterCase: TranslatingAdapterCase): void {
  describe(`translating ProviderAdapter conformance: ${adapterCase.name}`, () => {
    let upstream: FakeNativeUpstream;
    let adapter: ReturnType<typeof chatAdapterOf>;
    const make = (overrides: Partial<DeploymentSettings['timeouts']> = {}) =>
      chatAdapterOf(adapterCase.factory.create(settingsFor(adapterCase.params(upstream.origin), overrides)));

    beforeAll(async () => {
      upstream = await adapterCase.startUpstream();
      adapter = make();
    });
    afterAll(async () => {
      await adapter?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    it('accepts its own params', () => {
      expect(adapterCase.factory.validate(adapterCase.params('http://127.0.0.1:1'))).toEqual([]);
    });

    it('translates system prompt, tool round trip, tools and generation settings to the native request', async () => {
      await adapter.complete(conversation, context());
      const seen = upstream.requests[0]!;
      adapterCase.expectEndpoint(seen, false);
      const view = adapterCase.view(seen);
      expect(view.system).toBe('Be brief.');
      expect(view.tools).toEqual(['get_weather']);
      expect(view).toMatchObject({ maxTokens: 64, temperature: 0.3, stop: ['END'] });
      expect(view.parts).toMatchObject([
        { role: 'user', text: 'What is the weather in Paris?' },
        { role: 'assistant', toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } },
        { role: 'user', toolResult: { content: '{"temp":21}' } },
        { role: 'user', text: 'And tomorrow?' },
      ]);
      if (adapterCase.keepsToolCallIds) {
        expect(view.parts[1]!.toolCall!.id).toBe('call_1');
        expect(view.parts[2]!.toolResult!.id).toBe('call_1');
      }
    });

    it('answers a text completion with content, stop reason and usage in the canonical shape', async () => {
      upstream.enqueue({ kind: 'text', text: 'Hello from upstream' });
      const { response, json } = await adapter.complete(simple, context());
      expect(response).toMatchObject({ object: 'chat.completion', model: expect.any(String) });
      expect(response.id).toEqual(expect.any(String));
      expect(response.choices[0]).toMatchObject({
        index: 0,
        message: { role: 'assistant', content: 'Hello from upstream' },
        finish_reason: 'stop',
      });
      expect(response.usage).toMatchObject(adapterCase.expectedUsage);
      if (json !== undefined) expect(JSON.parse(json)).toEqual(response);
    });

    it('maps a length stop to finish_reason length', async () => {
      upstream.enqueue({ kind: 'text', text: 'cut', finish: 'length' });
      const { response } = await adapter.complete(simple, context());
      expect(response.choices[0]!.finish_reason).toBe('length');
    });

    it('answers a tool call with its name, JSON arguments and finish_reason tool_calls', async () => {
      upstream.enqueue({ kind: 'tool-call', name: 'get_weather', arguments: { city: 'Oslo' } });
      const { response } = await adapter.complete({ ...simple, tools: [weatherTool] }, context());
      const choice = response.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0]!;
      expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(call.id).toEqual(expect.any(String));
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });
    });

    it('sends a json_schema response_format natively and answers the JSON as text content', async () => {
      upstream.enqueue({ kind: 'json', value: { city: 'Oslo', temp: 4 } });
      const { response } = await adapter.complete(
        {
          ...simple,
          response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema } },
        },
        context(),
      );
      expect(adapterCase.view(upstream.requests[0]!).jsonSchema).toEqual(weatherSchema);
      expect(JSON.parse(response.choices[0]!.message.content!)).toEqual({ city: 'Oslo', temp: 4 });
      expect(response.choices[0]!.finish_reason).toBe('stop');
    });

    it('streams text deltas in order, then the stop reason, then one usage-only chunk', async () => {
      upstream.enqueue({ kind: 'text', text: 'one two three four' });
      const chunks = await collect(adapter.stream({ ...simple, stream: true }, context()));
      adapterCase.expectEndpoint(upstream.requests[0]!, true);
      expect(chunks.length).toBeGreaterThan(3);
      expect(streamedText(chunks)).toBe('one two three four');
      expect(finishReasons(chunks)).toEqual(['stop']);
      const last = chunks.at(-1)!;
      expect(last.usageOnly).toBe(true);
      expect(last.chunk.choices).toEqual([]);
      expect(last.usage).toMatchObject(adapterCase.expectedUsage);
      expect(JSON.parse(last.json).usage).toMatchObject(adapterCase.expectedUsage);
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true);
      for (const chunk of chunks) {
        expect(chunk.chunk.object).toBe('chat.completion.chunk');
        expect(JSON.parse(chunk.json)).toEqual(chunk.chunk);
      }
    });

    it('streams a tool call: id and name first, arguments assembled from deltas, finish_reason tool_calls', async () => {
      upstream.enqueue({ kind: 'tool-call', name: 'get_weather', arguments: { city: 'Oslo', days: 3 } });
      const chunks = await collect(
        adapter.stream({ ...simple, tools: [weatherTool], stream: true }, context()),
      );
      const deltas = chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? []);
      expect(deltas[0]).toMatchObject({
        index: 0,
        id: expect.any(String),
        function: { name: 'get_weather' },
      });
      const assembled = deltas.map((delta) => delta.function?.arguments ?? '').join('');
      expect(JSON.parse(assembled)).toEqual({ city: 'Oslo', days: 3 });
      expect(finishReasons(chunks)).toEqual(['tool_calls']);
      expect(chunks.at(-1)!.usage).toMatchObject(adapterCase.expectedUsage);
    });

    it('classifies 5xx and 429 as retryable and 400, 401, 403 and 404 as not', async () => {
      for (const status of [500, 503, 429]) {
        upstream.enqueue({ kind: 'error', status });
        expect((await failure(adapter.complete(simple, context()))).retryable, String(status)).toBe(true);
      }
      for (const status of [400, 401, 403, 404]) {
        upstream.enqueue({ kind: 'error', status });
        const error = await failure(adapter.complete(simple, context()));
        expect(error, String(status)).toMatchObject({ kind: 'status', status, retryable: false });
      }
    });

    it('reads the native retry hint of a 429 and never keeps the error body', async () => {
      upstream.enqueue({ kind: 'error', status: 429, retryAfterSeconds: 7, secret: 'sk-upstream-leak' });
      const error = await failure(adapter.complete(simple, context()));
      expect(error).toMatchObject({ kind: 'status', status: 429, retryable: true });
      if (adapterCase.sendsRetryAfter) expect(error.retryAfterMs).toBe(7_000);
      const everything = JSON.stringify({ ...error, message: error.message });
      expect(everything).not.toContain('sk-upstream-leak');
    });

    it('classifies an error status on a stream request the same way', async () => {
      upstream.enqueue({ kind: 'error', status: 503 });
      const error = await failure(collect(adapter.stream({ ...simple, stream: true }, context())));
      expect(error).toMatchObject({ kind: 'status', status: 503, retryable: true });
    });

    it('treats an answer that is not the wire format as a protocol error', async () => {
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(adapter.complete(simple, context()))).kind).toBe('protocol');
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(collect(adapter.stream({ ...simple, stream: true }, context())))).kind).toBe(
        'protocol',
      );
    });

    it('fails a stream that breaks after some chunks, as a retryable error after the content sent', async () => {
      upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 2 });
      const received: StreamChunk[] = [];
      const error = await failure(
        (async () => {
          for await (const chunk of adapter.stream({ ...simple, stream: true }, context()))
            received.push(chunk);
        })(),
      );
      expect(streamedText(received).length).toBeGreaterThan(0);
      expect(error.retryable).toBe(true);
    });

    it('times out an upstream that sends no headers, as a retryable timeout', async () => {
      const impatient = make({ headersMs: 150, totalMs: 150, streamIdleMs: 150 });
      upstream.enqueue({ kind: 'hang' });
      const error = await failure(impatient.complete(simple, context()));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      await impatient.close();
    });

    it('aborts the upstream request when the caller goes away', async () => {
      upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const pending = adapter.complete(simple, { signal: controller.signal, requestId: 'r' });
      await waitUntil(() => upstream.requests.length === 1);
      controller.abort();
      expect((await failure(pending)).kind).toBe('aborted');
      await waitUntil(() => upstream.requests[0]!.aborted);
    });
  });
}
