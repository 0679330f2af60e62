/**
 * The canonical requests and answers of the non-text endpoints (embeddings, images, speech,
 * transcription, rerank). Requests are the OpenAI (Cohere, for rerank) request shapes, decoded and
 * validated by `wire/<endpoint>/`; unknown fields are kept so OpenAI-compatible upstreams receive what
 * the caller sent. Answers carry what accounting needs: token usage and the non-token units a call is
 * billed by.
 */
import type { Usage } from './usage.ts';

/** Non-token units a provider call is billed by (LiteLLM's per-image, per-second, per-query, per-character prices). */
export interface BilledUnits {
  images?: number;
  audioSeconds?: number;
  searches?: number;
  characters?: number;
}

/** What one provider call consumed: tokens when the provider reported them, and billed units. */
export interface Consumption {
  usage?: Usage;
  units?: BilledUnits;
}

// ---------------------------------------------------------------------------------------- embeddings

export interface EmbeddingRequest {
  model: string;
  /** One text, several texts, one token array or several token arrays. */
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [key: string]: unknown;
}

export interface EmbeddingResponse {
  object: 'list';
  /**
   * In input order; `embedding` is floats, or base64 of little-endian float32 (the wire encoder writes
   * the encoding the caller asked for).
   */
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage?: { prompt_tokens: number; total_tokens: number };
}

export interface EmbeddingResult extends Consumption {
  response: EmbeddingResponse;
  /** The answer as the upstream's OpenAI JSON text, when the upstream speaks it and the caller's encoding was kept. */
  json?: string;
}

// -------------------------------------------------------------------------------------------- images

export interface ImageRequest {
  model: string;
  prompt: string;
  /** `<W>x<H>` (or `auto`), validated by the decoder. */
  size?: string;
  n?: number;
  response_format?: 'url' | 'b64_json';
  quality?: string;
  style?: string;
  user?: string;
  [key: string]: unknown;
}

export interface ImageResponse {
  created: number;
  data: Array<{ url?: string; b64_json?: string; revised_prompt?: string }>;
  usage?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ImageResult extends Consumption {
  response: ImageResponse;
  json?: string;
}

// -------------------------------------------------------------------------------------------- speech

export const SPEECH_FORMATS = ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export interface SpeechRequest {
  model: string;
  input: string;
  voice?: string;
  response_format: SpeechFormat;
  speed?: number;
  instructions?: string;
  [key: string]: unknown;
}

/** Audio bytes as the provider sends them; the router pulls the first chunk before it commits. */
export interface SpeechResult extends Consumption {
  contentType: string;
  /** The total size when the upstream announced it (lets a WAV header be fixed without buffering). */
  contentLength?: number;
  audio: AsyncIterable<Buffer>;
}

// ------------------------------------------------------------------------------------- transcription

export const TRANSCRIPTION_FORMATS = ['json', 'verbose_json', 'text', 'srt', 'vtt'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The uploaded audio, spooled to a private temporary file so each attempt can stream it again. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  bytes: number;
  /** The file as a Blob backed by the spooled file, fresh for each attempt (streams when read; for FormData bodies). */
  blob(): Promise<Blob>;
}

export interface TranscriptionRequest {
  model: string;
  file: UploadedFile;
  language?: string;
  prompt?: string;
  response_format: TranscriptionFormat;
  temperature?: number;
  /** Other form fields the caller sent (timestamp_granularities[], …), passed to OpenAI-style upstreams. */
  extra: ReadonlyArray<readonly [name: string, value: string]>;
}

/** A transcript in OpenAI's verbose_json shape, from which every public format is written. */
export interface Transcript {
  text: string;
  language?: string;
  /** Seconds of audio. */
  duration?: number;
  segments?: Array<{ id: number; start: number; end: number; text: string; [key: string]: unknown }>;
  words?: Array<{ word: string; start: number; end: number; [key: string]: unknown }>;
  usage?: Record<string, unknown>;
}

export interface TranscriptionResult extends Consumption {
  /** The answer already in the requested format (an OpenAI-style upstream asked for it), when at hand. */
  raw?: { contentType: string; body: string };
  /** The answer as a transcript, when the provider's format had to be converted. */
  transcript?: Transcript;
}

// -------------------------------------------------------------------------------------------- rerank

export interface RerankRequest {
  model: string;
  query: string;
  documents: Array<string | { text: string; [key: string]: unknown }>;
  top_n?: number;
  return_documents?: boolean;
  [key: string]: unknown;
}

export interface RerankResponse {
  id?: string;
  /** Best first. */
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens?: number; search_units?: number; [key: string]: unknown };
  [key: string]: unknown;
}

export interface RerankResult extends Consumption {
  response: RerankResponse;
}
