/**
 * Embeddings through Cohere's `POST /v2/embed`: texts in batches of Cohere's limit (96), `input_type`
 * from the caller, else the deployment, else `search_document`; `dimensions` as `output_dimension`;
 * float vectors back in input order, and `meta.billed_units.input_tokens` as the prompt tokens.
 */
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/modalities.ts';
import { isCount } from '../../canonical/usage.ts';
import { mapBounded } from '../bounded-map.ts';
import { COHERE_MAX_TEXTS, cohereEmbedFields } from '../cohere-embed-fields.ts';
import { embeddingResult, embeddingTexts, inBatches, isVector } from '../embedding-vectors.ts';
import type { AttemptContext, DeploymentSettings, EmbeddingsCapability } from '../provider-adapter.ts';
import type { CoherePost } from './cohere-adapter.ts';
import { notCohereAnswer } from './cohere-errors.ts';

/** Batches of one request in flight at once (each holds a pooled connection). */
const BATCH_CONCURRENCY = 4;
/** Models whose vectors have one size (v2 and v3 families); embed-v4 and later take output_dimension. */
const FIXED_SIZE_MODEL = /^embed-.*-v[23](\.\d+)?$/;

export class CohereEmbeddings implements EmbeddingsCapability {
  private readonly post: CoherePost;
  /** The deployment's `input_type` and `truncate` (checked at start). */
  private readonly defaults: Readonly<Record<string, unknown>>;

  constructor(settings: DeploymentSettings, post: CoherePost) {
    this.post = post;
    this.defaults = settings.params;
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    const texts = embeddingTexts(request, 'Cohere');
    const fields = { model: request.model, ...cohereEmbedFields(request, this.defaults, FIXED_SIZE_MODEL) };
    const answers = await mapBounded(
      inBatches(texts, COHERE_MAX_TEXTS),
      BATCH_CONCURRENCY,
      context.signal,
      async (batch, _index, signal) =>
        readEmbedAnswer(await this.post('embed', { ...fields, texts: batch }, { ...context, signal }), batch),
    );
    const tokens = answers.map((answer) => answer.tokens);
    const promptTokens = tokens.every(isCount) ? tokens.reduce((sum, count) => sum + count, 0) : undefined;
    return embeddingResult(
      request,
      answers.flatMap((answer) => answer.vectors),
      promptTokens,
    );
  }
}

/** The float vectors of one batch (one per text) and its billed input tokens, if Cohere reported them. */
function readEmbedAnswer(
  parsed: unknown,
  batch: readonly string[],
): { vectors: number[][]; tokens: number | undefined } {
  const answer = parsed as {
    embeddings?: { float?: unknown };
    meta?: { billed_units?: { input_tokens?: unknown } };
  } | null;
  const vectors = answer?.embeddings?.float;
  if (!Array.isArray(vectors) || vectors.length !== batch.length || !vectors.every(isVector))
    throw notCohereAnswer('embed');
  const tokens = answer?.meta?.billed_units?.input_tokens;
  return { vectors, tokens: isCount(tokens) ? tokens : undefined };
}
