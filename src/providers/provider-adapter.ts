/**
 * The contract every provider implements. Adapters speak the canonical model on one side and their
 * provider's wire format on the other; they know nothing of routing, limits or accounting.
 */

import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';

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

/**
 * A deployment's adapter declares what it serves through optional capabilities: `chat` for the text
 * endpoints today; embeddings, rerank, speech and transcription join as capabilities of their own.
 * A group whose mode needs a capability its adapter lacks is refused at start.
 */
export interface ProviderAdapter {
  readonly chat?: ChatCapability;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

/** The `model_info.mode` values each capability serves (LiteLLM's names). */
export const CAPABILITY_MODES: Readonly<Record<keyof Omit<ProviderAdapter, 'close'>, readonly string[]>> = {
  chat: ['chat', 'completion', 'responses'],
};

/** What a factory needs to build an adapter for one deployment. */
export interface DeploymentSettings {
  /** The upstream model name (`params.model`). */
  model: string;
  /** The deployment's params as configured (provider-specific keys included). */
  params: Readonly<Record<string, unknown>>;
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
