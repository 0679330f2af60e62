/**
 * Embeddings through Cohere's `POST /v2/embed`: texts in batches of Cohere's limit (96), `input_type`
 * from the caller, else the deployment, else `search_document`; `dimensions` as `output_dimension`;
 * float vectors back in input order, and `meta.billed_units.input_tokens` as the prompt tokens.
 */
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { mapBounded } from '../bounded-map.ts';
import {
  embeddingResult,
  embeddingTexts,
  inBatches,
  isCount,
  isVector,
  refuseDimensions,
  requestedDimensions,
} from '../embedding-vectors.ts';
import type { AttemptContext, DeploymentSettings, EmbeddingsCapability } from '../provider-adapter.ts';
import type { CoherePost } from './cohere-adapter.ts';
import { notCohereAnswer } from './cohere-errors.ts';
import {
  COHERE_INPUT_TYPES,
  COHERE_TRUNCATE_VALUES,
  DEFAULT_INPUT_TYPE,
  isInputType,
  isTruncate,
} from './cohere-settings.ts';

/** Cohere's most texts per embed call. */
export const COHERE_MAX_TEXTS = 96;
/** Batches of one request in flight at once (each holds a pooled connection). */
const BATCH_CONCURRENCY = 4;
/** Models whose vectors have one size (v2 and v3 families); embed-v4 and later take output_dimension. */
const FIXED_SIZE_MODEL = /^embed-.*-v[23](\.\d+)?$/;

export class CohereEmbeddings implements EmbeddingsCapability {
  private readonly post: CoherePost;
  private readonly inputType: string;
  private readonly truncate: string | undefined;

  constructor(settings: DeploymentSettings, post: CoherePost) {
    this.post = post;
    const { input_type: inputType, truncate } = settings.params;
    this.inputType = isInputType(inputType) ? inputType : DEFAULT_INPUT_TYPE;
    this.truncate = isTruncate(truncate) ? truncate : undefined;
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    const texts = embeddingTexts(request, 'Cohere');
    const fields = this.fields(request);
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

  /** Every field of the embed body but the texts; the caller's fields are checked and named when wrong. */
  private fields(request: EmbeddingRequest): Record<string, unknown> {
    const inputType = request.input_type ?? this.inputType;
    if (!isInputType(inputType))
      throw errors.invalidRequest(
        `input_type: must be one of ${COHERE_INPUT_TYPES.join(', ')}`,
        'input_type',
      );
    const truncate = typeof request.truncate === 'string' ? request.truncate.toUpperCase() : request.truncate;
    if (truncate !== undefined && !isTruncate(truncate))
      throw errors.invalidRequest(
        `truncate: must be one of ${COHERE_TRUNCATE_VALUES.join(', ')}`,
        'truncate',
      );
    const dimensions = requestedDimensions(request);
    if (dimensions !== undefined && FIXED_SIZE_MODEL.test(request.model)) refuseDimensions(request.model);
    return {
      model: request.model,
      input_type: inputType,
      embedding_types: ['float'],
      ...(dimensions !== undefined ? { output_dimension: dimensions } : {}),
      ...((truncate ?? this.truncate) !== undefined ? { truncate: truncate ?? this.truncate } : {}),
    };
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
