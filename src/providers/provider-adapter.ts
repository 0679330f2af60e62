/**
 * The contract every provider implements. Adapters speak the canonical model on one side and their
 * provider's wire format on the other; they know nothing of routing, limits or accounting.
 */

import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ImageResult,
  RerankRequest,
  RerankResult,
  SpeechRequest,
  SpeechResult,
  TranscriptionRequest,
  TranscriptionResult,
} from '../canonical/modalities.ts';

export interface AttemptContext {
  /** Aborts the upstream call: the caller left, the attempt timed out or the request deadline passed. */
  signal: AbortSignal;
  requestId: string;
  /** Headers from the caller that this deployment forwards (already filtered). */
  forwardedHeaders?: Readonly<Record<string, string>>;
  /**
   * Epoch ms (wall clock) by which the attempt must answer, or for a stream send its first chunk: the
   * request deadline left after earlier attempts. Adapters shorten their own timeouts to it.
   */
  deadline?: number;
  /**
   * Called when the request is handed to the connection pool to be sent (sendRequest does it; an
   * adapter that sends otherwise must too). A failure of our own code before it produced no output.
   */
  dispatched?: () => void;
}

/** Milliseconds left before `deadline` (never below 1), capped at `limit`. */
export function timeLeft(deadline: number | undefined, limit: number): number {
  return deadline === undefined ? limit : Math.max(1, Math.min(limit, deadline - Date.now()));
}

export interface CompletionResult {
  response: ChatCompletion;
  /** The response serialized as the chat-completions wire expects it, when the adapter has it already. */
  json?: string;
  /** The upstream's answer as received, when the request went upstream in its native format. */
  native?: string;
}

/** Text generation through the canonical chat model: what every text endpoint needs. */
export interface ChatCapability {
  /** A non-streaming chat completion. Throws UpstreamError. */
  complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult>;
  /**
   * A streamed chat completion. The iterator throws UpstreamError; the router pulls the first chunk
   * before it commits the response, so failures up to then can still be retried elsewhere.
   */
  stream(request: ChatRequest, context: AttemptContext): AsyncIterable<StreamChunk>;
}

/** Embeddings: every input's vector in input order. Throws UpstreamError. */
export interface EmbeddingsCapability {
  embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult>;
}

/** Image generation. Throws UpstreamError. */
export interface ImagesCapability {
  generate(request: ImageRequest, context: AttemptContext): Promise<ImageResult>;
}

/**
 * Text to speech. Resolves once the upstream answered with audio; the audio iterator throws
 * UpstreamError. The router pulls the first chunk before it commits, as for chat streams.
 */
export interface SpeechCapability {
  speak(request: SpeechRequest, context: AttemptContext): Promise<SpeechResult>;
}

/** Speech to text; the upload is streamed from its spooled file on each attempt. Throws UpstreamError. */
export interface TranscriptionCapability {
  transcribe(request: TranscriptionRequest, context: AttemptContext): Promise<TranscriptionResult>;
}

/** Reranking documents against a query. Throws UpstreamError. */
export interface RerankCapability {
  rerank(request: RerankRequest, context: AttemptContext): Promise<RerankResult>;
}

/**
 * A deployment's adapter declares what it serves through optional capabilities: `chat` for the text
 * endpoints, and one capability per other endpoint. A group whose mode needs a capability its adapter
 * lacks is refused at start.
 */
export interface ProviderAdapter {
  readonly chat?: ChatCapability;
  readonly embeddings?: EmbeddingsCapability;
  readonly images?: ImagesCapability;
  readonly speech?: SpeechCapability;
  readonly transcription?: TranscriptionCapability;
  readonly rerank?: RerankCapability;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

export type Capability = keyof Omit<ProviderAdapter, 'close'>;

/** The `model_info.mode` values each capability serves (LiteLLM's names). */
export const CAPABILITY_MODES: Readonly<Record<Capability, readonly string[]>> = {
  chat: ['chat', 'completion', 'responses'],
  embeddings: ['embedding'],
  images: ['image_generation'],
  speech: ['audio_speech'],
  transcription: ['audio_transcription'],
  rerank: ['rerank'],
};

/** What a factory needs to build an adapter for one deployment. */
export interface DeploymentSettings {
  /** The upstream model name (`params.model`). */
  model: string;
  /** The deployment's params as configured (provider-specific keys included). */
  params: Readonly<Record<string, unknown>>;
  /** `model_info.default_params`: request values the deployment supplies when the caller leaves them out. */
  defaultParams?: Readonly<Record<string, unknown>>;
  timeouts: { connectMs: number; headersMs: number; streamIdleMs: number; totalMs: number; poolMs: number };
  maxConnections: number;
}

export interface ProviderFactory {
  readonly name: string;
  /** Provider-specific params this adapter reads, for validation messages and docs. */
  readonly knownParams: readonly string[];
  /** Returns problems with the params (each "key: message"), or an empty list. */
  validate(params: Readonly<Record<string, unknown>>): string[];
  create(settings: DeploymentSettings): ProviderAdapter;
}
