/**
 * How an OpenAI-style deployment is reached: its endpoint (origin, the path of each operation, auth
 * headers) and its connection pool. The chat adapter and each other capability (embeddings, images,
 * audio, rerank) send their calls through one transport per deployment, so they share the pool and
 * the deployment's timeouts.
 */
import type { AttemptContext, DeploymentSettings } from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { readJsonAnswer, sendRequest } from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { classifyErrorResponse } from './openai-errors.ts';

/** Where and how to reach one deployment. */
export interface Endpoint {
  /** `https://host:port`. */
  origin: string;
  /** Path of the chat-completions call, with any query string. */
  path: string;
  /** Authentication and extra headers sent on every call. */
  headers: Readonly<Record<string, string>>;
}

/** The OpenAI operations besides chat, by their path under the API base (`/v1/<operation>`). */
export type OpenAiOperation =
  | 'chat/completions'
  | 'embeddings'
  | 'images/generations'
  | 'audio/speech'
  | 'audio/transcriptions'
  | 'rerank';

/** An OpenAI-style endpoint: the path of every operation (Azure puts them under its deployment). */
export interface OpenAiEndpoint extends Endpoint {
  pathOf(operation: OpenAiOperation): string;
}

/** A request body and its content type (JSON text, or a streamed multipart body). */
export interface OutgoingBody {
  contentType: string;
  body: string | AsyncIterable<Uint8Array>;
}

export class OpenAiTransport {
  readonly endpoint: OpenAiEndpoint;
  readonly settings: DeploymentSettings;
  readonly pool: UpstreamPool;

  constructor(endpoint: OpenAiEndpoint, settings: DeploymentSettings) {
    this.endpoint = endpoint;
    this.settings = settings;
    this.pool = new UpstreamPool(endpoint.origin, settings);
  }

  /** Posts to an operation; `streaming` uses the stream timeouts (the answer is read as it arrives). */
  send(
    operation: OpenAiOperation,
    outgoing: OutgoingBody,
    accept: string,
    context: AttemptContext,
    streaming = false,
  ): Promise<UpstreamResponse> {
    const headers = {
      ...this.endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': outgoing.contentType,
      accept,
    };
    return sendRequest(
      this.pool,
      this.settings,
      { path: this.endpoint.pathOf(operation), headers, body: outgoing.body },
      context,
      streaming,
    );
  }

  /** Posts JSON and reads a JSON answer; an error status is classified (its body never relayed). */
  async postJson(
    operation: OpenAiOperation,
    body: unknown,
    context: AttemptContext,
  ): Promise<{ text: string; parsed: unknown }> {
    const response = await this.send(
      operation,
      { contentType: 'application/json', body: JSON.stringify(body) },
      'application/json',
      context,
    );
    if (response.status >= 400) throw await classifyErrorResponse(response);
    return readJsonAnswer(response);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
