/**
 * What a canonical modality request asks for, read the same way by the wire decoders, the providers
 * and the wire encoders: how many vectors an embeddings input wants, and the texts of rerank documents.
 */
import type { EmbeddingRequest, RerankRequest } from './modalities.ts';

/** How many vectors an input asks for: one per text or token array. */
export function embeddingInputCount(input: EmbeddingRequest['input']): number {
  if (typeof input === 'string') return 1;
  return typeof input[0] === 'number' ? 1 : input.length;
}

/** The text of each document, in order (an object document's `text`). */
export function documentTexts(documents: RerankRequest['documents']): string[] {
  return documents.map((document) => (typeof document === 'string' ? document : document.text));
}
