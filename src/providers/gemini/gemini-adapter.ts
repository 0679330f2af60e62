/**
 * The ProviderAdapter of the Gemini API: translates canonical requests to generateContent and
 * streamGenerateContent (SSE) calls over the deployment's pool, and their answers back to canonical
 * completions and chunks.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { withDefaults } from '../openai/request-defaults.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  DeploymentSettings,
  EmbeddingsCapability,
  ProviderAdapter,
} from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError } from '../upstream-error.ts';
import { expectStream, readJsonAnswer, sendRequest, withFirstChunkDeadline } from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { fromGeminiResponse, type ResponseIdentity } from './from-gemini-response.ts';
import { GeminiEmbeddings } from './gemini-embeddings.ts';
import { classifyGeminiErrorResponse } from './gemini-errors.ts';
import { GEMINI_REQUEST_DEFAULT_PARAMS, type GeminiEndpoint, geminiEndpoint } from './gemini-settings.ts';
import { geminiChunks } from './gemini-stream.ts';
import { toGeminiRequest } from './to-gemini-request.ts';

export class GeminiAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  /** batchEmbedContents, over the same pool. */
  readonly embeddings: EmbeddingsCapability;
  private readonly endpoint: GeminiEndpoint;
  private readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;
  private readonly defaults: Readonly<Record<string, unknown>> | undefined;

  constructor(settings: DeploymentSettings) {
    this.settings = settings;
    this.endpoint = geminiEndpoint(settings.params, settings.model);
    this.pool = new UpstreamPool(this.endpoint.origin, settings);
    this.defaults = requestDefaults(settings.params);
    this.embeddings = new GeminiEmbeddings(settings, this.pool, (model) =>
      model === settings.model ? this.endpoint : geminiEndpoint(settings.params, model),
    );
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const body = this.translate(request);
    const identity = this.identity(request.model, context);
    const response = await this.send(request.model, body, context, false);
    if (response.status >= 400) throw await classifyGeminiErrorResponse(response);
    const { parsed } = await readJsonAnswer(response);
    return { response: fromGeminiResponse(parsed, identity) };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    const body = this.translate(request);
    const response = await this.send(request.model, body, context, true);
    try {
      if (response.status >= 400) throw await classifyGeminiErrorResponse(response);
      expectStream(response, 'text/event-stream');
      const chunks = geminiChunks(response.body, this.identity(request.model, context));
      yield* withFirstChunkDeadline(response, this.settings, context, chunks);
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

  private send(
    model: string,
    body: string,
    context: AttemptContext,
    streaming: boolean,
  ): Promise<UpstreamResponse> {
    // A wildcard deployment (`gemini/*`) calls the model the caller named.
    const endpoint =
      model === this.settings.model ? this.endpoint : geminiEndpoint(this.settings.params, model);
    const headers = {
      ...endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    };
    const path = streaming ? endpoint.streamPath : endpoint.completePath;
    return sendRequest(this.pool, this.settings, { path, headers, body }, context, streaming);
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
