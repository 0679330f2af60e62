/**
 * The ProviderAdapter of the Gemini API: translates canonical requests to generateContent and
 * streamGenerateContent (SSE) calls over the deployment's pool, and their answers back to canonical
 * completions and chunks.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { withDefaults } from '../openai/request-defaults.ts';
import {
  type AttemptContext,
  type CompletionResult,
  type DeploymentSettings,
  type ProviderAdapter,
  timeLeft,
} from '../provider-adapter.ts';
import { FirstChunkTimeoutError, sendUpstream, type UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError } from '../upstream-error.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { fromGeminiResponse, type ResponseIdentity } from './from-gemini-response.ts';
import { classifyGeminiErrorResponse, protocolError } from './gemini-errors.ts';
import { GEMINI_REQUEST_DEFAULT_PARAMS, type GeminiEndpoint, geminiEndpoint } from './gemini-settings.ts';
import { geminiChunks } from './gemini-stream.ts';
import { toGeminiRequest } from './to-gemini-request.ts';

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class GeminiAdapter implements ProviderAdapter {
  private readonly endpoint: GeminiEndpoint;
  private readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;
  private readonly defaults: Readonly<Record<string, unknown>> | undefined;

  constructor(settings: DeploymentSettings) {
    this.settings = settings;
    this.endpoint = geminiEndpoint(settings.params, settings.model);
    this.pool = new UpstreamPool(this.endpoint.origin, settings);
    this.defaults = requestDefaults(settings.params);
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const body = this.translate(request);
    const identity = this.identity(request.model, context);
    const response = await this.send(request.model, body, context, false);
    if (response.status >= 400) throw await classifyGeminiErrorResponse(response);
    let text: string;
    try {
      text = await response.text(MAX_RESPONSE_BYTES);
    } catch (error) {
      throw classifyTransportError(error);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw protocolError('the upstream answered with malformed JSON');
    }
    return { response: fromGeminiResponse(parsed, identity) };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    const body = this.translate(request);
    const response = await this.send(request.model, body, context, true);
    try {
      if (response.status >= 400) throw await classifyGeminiErrorResponse(response);
      if (!String(response.headers['content-type'] ?? '').includes('text/event-stream'))
        throw protocolError('the upstream did not answer with an event stream');
      // Until the first chunk the request deadline applies: keep-alive comments do not count.
      const waitMs = timeLeft(context.deadline, this.settings.timeouts.totalMs);
      let firstChunkTimer: NodeJS.Timeout | undefined = setTimeout(
        () => response.abort(new FirstChunkTimeoutError(waitMs)),
        waitMs,
      );
      try {
        for await (const chunk of geminiChunks(response.body, this.identity(request.model, context))) {
          if (firstChunkTimer) firstChunkTimer = void clearTimeout(firstChunkTimer);
          yield chunk;
        }
      } catch (error) {
        throw classifyTransportError(error);
      } finally {
        clearTimeout(firstChunkTimer);
      }
    } finally {
      response.cancel();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** The Gemini request body; a request Gemini cannot express throws a non-retryable UpstreamError. */
  private translate(request: ChatRequest): string {
    try {
      return JSON.stringify(toGeminiRequest(withDefaults(request, this.defaults)));
    } catch (error) {
      throw classifyTransportError(error);
    }
  }

  private identity(model: string, context: AttemptContext): ResponseIdentity {
    return {
      requestId: context.requestId,
      model,
      created: Math.floor(Date.now() / 1000),
    };
  }

  private async send(
    model: string,
    body: string,
    context: AttemptContext,
    streaming: boolean,
  ): Promise<UpstreamResponse> {
    const { timeouts } = this.settings;
    // A wildcard deployment (`gemini/*`) calls the model the caller named.
    const endpoint =
      model === this.settings.model ? this.endpoint : geminiEndpoint(this.settings.params, model);
    try {
      return await sendUpstream({
        dispatcher: this.pool.dispatcher,
        path: streaming ? endpoint.streamPath : endpoint.completePath,
        headers: {
          ...endpoint.headers,
          ...context.forwardedHeaders,
          'content-type': 'application/json',
          accept: streaming ? 'text/event-stream' : 'application/json',
        },
        body,
        signal: context.signal,
        poolTimeoutMs: timeouts.poolMs,
        headersTimeoutMs: timeLeft(context.deadline, streaming ? timeouts.streamIdleMs : timeouts.headersMs),
        bodyTimeoutMs: streaming ? timeouts.streamIdleMs : timeouts.totalMs,
        ...(streaming ? {} : { totalTimeoutMs: timeLeft(context.deadline, timeouts.totalMs) }),
      });
    } catch (error) {
      throw classifyTransportError(error);
    }
  }
}

function requestDefaults(
  params: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> | undefined {
  const defaults: Record<string, unknown> = {};
  for (const name of GEMINI_REQUEST_DEFAULT_PARAMS)
    if (params[name] !== undefined) defaults[name] = params[name];
  return Object.keys(defaults).length > 0 ? Object.freeze(defaults) : undefined;
}
