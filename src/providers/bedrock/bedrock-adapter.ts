/**
 * The Bedrock ProviderAdapter: canonical requests go to Converse (`/model/{id}/converse`) or
 * ConverseStream (`/model/{id}/converse-stream`), SigV4-signed per request; answers come back as
 * canonical completions and chunks.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  DeploymentSettings,
  EmbeddingsCapability,
  ProviderAdapter,
} from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { LocalFailure, UpstreamError } from '../upstream-error.ts';
import {
  expectStream,
  protocolError,
  readJsonAnswer,
  sendRequest,
  withFirstChunkDeadline,
} from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { bedrockEmbeddings } from './bedrock-embeddings.ts';
import { classifyBedrockError } from './bedrock-errors.ts';
import {
  BEDROCK_DEFAULT_PARAMS,
  type BedrockEndpoint,
  bedrockEndpoint,
  bedrockModelId,
} from './bedrock-settings.ts';
import { BedrockSigner, type CredentialSource } from './bedrock-signer.ts';
import { converseChunks } from './converse-stream.ts';
import { fromConverseResponse, isConverseAnswer } from './from-converse-response.ts';
import { toConverseRequest } from './to-converse-request.ts';

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

export class BedrockAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  /** InvokeModel, when the model is a Titan or Cohere embedding model (bedrock-embeddings.ts). */
  readonly embeddings?: EmbeddingsCapability;
  private readonly settings: DeploymentSettings;
  private readonly endpoint: BedrockEndpoint;
  private readonly pool: UpstreamPool;
  private readonly signer: BedrockSigner;
  private readonly defaults: Readonly<Record<string, unknown>>;
  /** `/model/<encoded id>` under the endpoint's base path. */
  private readonly modelPath: string;

  /** `credentialSource` replaces the default AWS chain when no credentials are configured (tests). */
  constructor(settings: DeploymentSettings, credentialSource?: CredentialSource) {
    this.settings = settings;
    this.endpoint = bedrockEndpoint(settings.model, settings.params);
    this.pool = new UpstreamPool(this.endpoint.origin, settings);
    this.signer = new BedrockSigner(this.endpoint, credentialSource);
    const defaults: Record<string, unknown> = {};
    for (const name of BEDROCK_DEFAULT_PARAMS)
      if (settings.params[name] !== undefined) defaults[name] = settings.params[name];
    this.defaults = Object.freeze(defaults);
    this.modelPath = `${this.endpoint.basePath}/model/${encodeURIComponent(this.endpoint.modelId)}`;
    this.embeddings = bedrockEmbeddings(settings, this.endpoint.modelId, (model, body, context) =>
      this.send(model, 'invoke', body, context, 'application/json', false),
    );
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const { body, jsonToolName } = toConverseRequest(request, this.defaults);
    const response = await this.send(
      request.model,
      'converse',
      JSON.stringify(body),
      context,
      'application/json',
      false,
    );
    if (response.status >= 400) throw await classifyBedrockError(response);
    const { parsed } = await readJsonAnswer(response);
    if (!isConverseAnswer(parsed)) throw protocolError('the upstream answer is not a Converse response');
    const meta = this.answerMeta(request.model, response, context, jsonToolName);
    return { response: fromConverseResponse(parsed, meta) };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    const { body, jsonToolName } = toConverseRequest(request, this.defaults);
    const response = await this.send(
      request.model,
      'converse-stream',
      JSON.stringify(body),
      context,
      EVENT_STREAM,
      true,
    );
    try {
      if (response.status >= 400) throw await classifyBedrockError(response);
      expectStream(response, EVENT_STREAM);
      const meta = this.answerMeta(request.model, response, context, jsonToolName);
      yield* withFirstChunkDeadline(response, this.settings, context, converseChunks(response.body, meta));
    } finally {
      response.cancel();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private answerMeta(
    model: string,
    response: UpstreamResponse,
    context: AttemptContext,
    jsonToolName: string | undefined,
  ) {
    const requestId = response.headers['x-amzn-requestid'];
    const id = typeof requestId === 'string' && requestId ? requestId : context.requestId;
    return {
      id: `chatcmpl-${id}`,
      created: Math.floor(Date.now() / 1000),
      model: bedrockModelId(model),
      jsonToolName,
    };
  }

  /** The model's path; a wildcard deployment (`bedrock/*`) gets the model the caller named. */
  private modelPathFor(model: string): string {
    if (model === this.settings.model) return this.modelPath;
    return `${this.endpoint.basePath}/model/${encodeURIComponent(bedrockModelId(model))}`;
  }

  private async send(
    model: string,
    operation: 'converse' | 'converse-stream' | 'invoke',
    body: string,
    context: AttemptContext,
    accept: string,
    streaming: boolean,
  ): Promise<UpstreamResponse> {
    const path = `${this.modelPathFor(model)}/${operation}`;
    const headers = await this.sign(path, body, context, accept);
    return sendRequest(this.pool, this.settings, { path, headers, body }, context, streaming);
  }

  private async sign(
    path: string,
    body: string,
    context: AttemptContext,
    accept: string,
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = { ...this.endpoint.headers };
    for (const [name, value] of Object.entries(context.forwardedHeaders ?? {}))
      headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    headers.accept = accept;
    try {
      return await this.signer.sign(path, headers, body);
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      throw new LocalFailure(error);
    }
  }
}
