/**
 * The embeddings request of the `embeddings` phase: four short passages of a document to index, as the
 * `openai` SDK sends them by default (`encoding_format: base64`, which it decodes itself).
 */

export const BENCH_EMBEDDING_MODEL = 'bench-embedding-model';

const PASSAGES = [
  'The Dispossessed (CAT-1974-017) follows a physicist who leaves an anarchist moon for its capitalist twin.',
  'The Left Hand of Darkness (CAT-1969-004) is set on a winter planet whose people have no fixed sex.',
  'A Wizard of Earthsea (CAT-1968-002) tells of a young mage who looses a shadow on the world.',
  'The Lathe of Heaven (CAT-1971-009) is about a man whose dreams change reality when he wakes.',
];

export const BENCH_EMBEDDING_INPUTS = PASSAGES.length;

export function embeddingRequestBody(): string {
  return JSON.stringify({ model: BENCH_EMBEDDING_MODEL, input: PASSAGES, encoding_format: 'base64' });
}
