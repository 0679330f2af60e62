/**
 * The Bedrock embedding models Switchboard calls through InvokeModel, by model id (an inference-profile
 * prefix such as `us.` or an ARN's last segment is looked through), and the checks of the params only
 * they read: `normalize` (Titan Text Embeddings V2), `input_type` and `truncate` (Cohere Embed).
 */
import { cohereEmbedParamProblems } from '../cohere-embed-fields.ts';

/**
 * `titan-v2`: inputText, dimensions, normalize. `titan-v1`: inputText only (G1 Text, one vector size).
 * `titan-multimodal`: inputText, embeddingConfig.outputEmbeddingLength. `cohere`: texts, input_type.
 */
export type BedrockEmbeddingFamily = 'titan-v2' | 'titan-v1' | 'titan-multimodal' | 'cohere';

const FAMILIES: ReadonlyArray<readonly [pattern: RegExp, family: BedrockEmbeddingFamily]> = [
  [/^amazon\.titan-embed-text-v2/, 'titan-v2'],
  [/^amazon\.titan-embed-image/, 'titan-multimodal'],
  [/^amazon\.titan-embed/, 'titan-v1'],
  [/^cohere\.embed/, 'cohere'],
];

/** Embedding families by the prefixes documented for them (for messages and docs). */
export const EMBEDDING_MODEL_PREFIXES =
  'amazon.titan-embed-text-v2, amazon.titan-embed-text-v1, amazon.titan-embed-g1-text, amazon.titan-embed-image-v1, cohere.embed-*';

/** The family of a model id, or undefined for a model that is not one of them. */
export function embeddingFamilyOf(modelId: string): BedrockEmbeddingFamily | undefined {
  const id = modelId.slice(modelId.lastIndexOf('/') + 1).replace(/^[a-z]{2,6}(-[a-z]+)?\.(?=[a-z]+\.)/, '');
  return FAMILIES.find(([pattern]) => pattern.test(id))?.[1];
}

/** Problems with the embedding params of a deployment of `modelId` (each "key: message"). */
export function embeddingParamProblems(params: Readonly<Record<string, unknown>>, modelId: string): string[] {
  const family = embeddingFamilyOf(modelId);
  const problems: string[] = [];
  if (family === undefined && /embed/i.test(modelId))
    problems.push(
      `model: '${modelId}' is not an embedding model Switchboard calls on Bedrock (${EMBEDDING_MODEL_PREFIXES})`,
    );
  const only = (key: string, families: readonly BedrockEmbeddingFamily[], models: string) => {
    if (params[key] !== undefined && (family === undefined || !families.includes(family)))
      problems.push(`${key}: only ${models} embedding models take it`);
  };
  only('normalize', ['titan-v2'], 'Titan Text Embeddings V2');
  only('input_type', ['cohere'], 'Cohere Embed');
  only('truncate', ['cohere'], 'Cohere Embed');
  if (params.normalize !== undefined && typeof params.normalize !== 'boolean')
    problems.push('normalize: must be true or false');
  problems.push(...cohereEmbedParamProblems(params));
  return problems;
}
