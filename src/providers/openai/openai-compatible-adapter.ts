/**
 * A ProviderAdapter for every server that speaks the OpenAI chat-completions wire format (OpenAI,
 * Azure OpenAI, vLLM, Ollama, Groq …). The caller's JSON goes upstream with only the model swapped;
 * answers come back as the upstream's bytes, parsed only to check them and to read usage.
 */

import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import type { ChatCompletion } from '../../canonical/chat-response.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  DeploymentSettings,
  EmbeddingsCapability,
  ImagesCapability,
  ProviderAdapter,
  RerankCapability,
  SpeechCapability,
  TranscriptionCapability,
} from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { expectStream, protocolError, readJsonAnswer, withFirstChunkDeadline } from '../upstream-exchange.ts';
import { OpenAiSpeech, OpenAiTranscription } from './openai-audio.ts';
import { OpenAiEmbeddings, type OpenAiEmbeddingsOptions } from './openai-embeddings.ts';
import { classifyErrorResponse } from './openai-errors.ts';
import { OpenAiImages } from './openai-images.ts';
import { OpenAiRerank, type RerankFormat } from './openai-rerank.ts';
import { openAiChunks } from './openai-stream.ts';
import { type OpenAiEndpoint, OpenAiTransport } from './openai-transport.ts';
import { requestDefaults, withDefaults } from './request-defaults.ts';

export type { Endpoint } from './openai-transport.ts';

export class OpenAiCompatibleAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  readonly embeddings: EmbeddingsCapability;
  readonly images: ImagesCapability;
  readonly rerank: RerankCapability;
  readonly speech: SpeechCapability;
  readonly transcription: TranscriptionCapability;
  private readonly transport: OpenAiTransport;
  private readonly settings: DeploymentSettings;
  /** Request fields the deployment sets when the caller does not (computed once). */
  private readonly defaults: Readonly<Record<string, unknown>> | undefined;

  constructor(
    endpoint: OpenAiEndpoint,
    settings: DeploymentSettings,
    embeddingOptions: OpenAiEmbeddingsOptions = {},
  ) {
    this.transport = new OpenAiTransport(endpoint, settings);
    this.embeddings = new OpenAiEmbeddings(this.transport, embeddingOptions);
    this.images = new OpenAiImages(this.transport);
    this.speech = new OpenAiSpeech(this.transport);
    this.transcription = new OpenAiTranscription(this.transport);
    this.rerank = new OpenAiRerank(this.transport, settings.params.rerank_format as RerankFormat | undefined);
    this.settings = settings;
    this.defaults = requestDefaults(settings.params);
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const response = await this.send(request, context, false);
    if (response.status >= 400) throw await classifyErrorResponse(response);
    const { text, parsed } = await readJsonAnswer(response);
    if (!isChatCompletion(parsed)) throw protocolError('the upstream answer is not a chat completion');
    return { response: parsed, json: text };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    const response = await this.send(request, context, true);
    try {
      if (response.status >= 400) throw await classifyErrorResponse(response);
      expectStream(response, 'text/event-stream');
      yield* withFirstChunkDeadline(response, this.settings, context, openAiChunks(response.body));
    } finally {
      response.cancel();
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private send(request: ChatRequest, context: AttemptContext, streaming: boolean): Promise<UpstreamResponse> {
    const body = JSON.stringify(withDefaults(request as unknown as Record<string, unknown>, this.defaults));
    return this.transport.send(
      'chat/completions',
      { contentType: 'application/json', body },
      streaming ? 'text/event-stream' : 'application/json',
      context,
      streaming,
    );
  }
}

function isChatCompletion(value: unknown): value is ChatCompletion {
  return (
    value !== null && typeof value === 'object' && Array.isArray((value as { choices?: unknown }).choices)
  );
}
