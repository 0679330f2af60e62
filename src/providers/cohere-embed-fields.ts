/**
 * Cohere Embed's request fields, shared by the two ways Switchboard reaches Cohere Embed models:
 * Cohere's own v2 API (`providers/cohere`) and Bedrock's InvokeModel (`providers/bedrock`). Their
 * bodies differ only in `model`; `input_type`, `truncate`, `output_dimension`, the float embedding
 * type and the 96 texts a call takes are the same, and so are the checks of a deployment's defaults.
 */
import type { EmbeddingRequest } from '../canonical/modalities.ts';
import { errors } from '../lib/error-catalogue.ts';
import { refuseDimensions, requestedDimensions } from './embedding-vectors.ts';

/** Cohere's `input_type` values for text (v3 and later embed models require one). */
export const COHERE_INPUT_TYPES = [
  'search_document',
  'search_query',
  'classification',
  'clustering',
] as const;
/** What Cohere does with a text longer than the model takes. */
export const COHERE_TRUNCATE_VALUES = ['NONE', 'START', 'END'] as const;
/** The input_type sent when neither the caller nor the deployment names one (LiteLLM's default too). */
export const DEFAULT_INPUT_TYPE = 'search_document';
/** Cohere Embed's most texts per call. */
export const COHERE_MAX_TEXTS = 96;

export function isInputType(value: unknown): value is (typeof COHERE_INPUT_TYPES)[number] {
  return (COHERE_INPUT_TYPES as readonly unknown[]).includes(value);
}

export function isTruncate(value: unknown): value is (typeof COHERE_TRUNCATE_VALUES)[number] {
  return (COHERE_TRUNCATE_VALUES as readonly unknown[]).includes(value);
}

/** Problems with a deployment's `input_type` and `truncate` defaults (each "key: message"). */
export function cohereEmbedParamProblems(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (params.input_type !== undefined && !isInputType(params.input_type))
    problems.push(`input_type: must be one of ${COHERE_INPUT_TYPES.join(', ')}`);
  if (params.truncate !== undefined && !isTruncate(params.truncate))
    problems.push(`truncate: must be one of ${COHERE_TRUNCATE_VALUES.join(', ')}`);
  return problems;
}

/**
 * Every field of an embed body but the texts and the model: `input_type` from the caller, else the
 * deployment, else search_document; `truncate` from the caller (any case) or the deployment;
 * `dimensions` as `output_dimension`, refused for a model of one vector size. A bad caller field is a
 * 400 naming it.
 */
export function cohereEmbedFields(
  request: EmbeddingRequest,
  defaults: Readonly<Record<string, unknown>>,
  fixedSizeModel: RegExp,
): Record<string, unknown> {
  const inputType = request.input_type ?? defaults.input_type ?? DEFAULT_INPUT_TYPE;
  if (!isInputType(inputType))
    throw errors.invalidRequest(`input_type: must be one of ${COHERE_INPUT_TYPES.join(', ')}`, 'input_type');
  const callerTruncate =
    typeof request.truncate === 'string' ? request.truncate.toUpperCase() : request.truncate;
  const truncate = callerTruncate ?? defaults.truncate;
  if (truncate !== undefined && !isTruncate(truncate))
    throw errors.invalidRequest(`truncate: must be one of ${COHERE_TRUNCATE_VALUES.join(', ')}`, 'truncate');
  const dimensions = requestedDimensions(request);
  if (dimensions !== undefined && fixedSizeModel.test(request.model)) refuseDimensions(request.model);
  return {
    input_type: inputType,
    embedding_types: ['float'],
    ...(truncate !== undefined ? { truncate } : {}),
    ...(dimensions !== undefined ? { output_dimension: dimensions } : {}),
  };
}
