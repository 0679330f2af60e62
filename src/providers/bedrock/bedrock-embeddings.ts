/**
 * Embeddings on Bedrock through InvokeModel (`POST /model/{modelId}/invoke`, SigV4-signed by the
 * adapter): Amazon Titan takes one text per call, so a list becomes several calls (at most four in
 * flight, answers kept in input order) whose `inputTextTokenCount`s add up to the usage; Cohere Embed
 * takes up to 96 texts per call and reports its tokens in the `x-amzn-bedrock-input-token-count` header.
 */
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/modalities.ts';
import { isCount } from '../../canonical/usage.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { mapBounded } from '../bounded-map.ts';
import { COHERE_MAX_TEXTS, cohereEmbedFields } from '../cohere-embed-fields.ts';
import {
  embeddingResult,
  embeddingTexts,
  inBatches,
  isVector,
  refuseDimensions,
  requestedDimensions,
} from '../embedding-vectors.ts';
import type { AttemptContext, DeploymentSettings, EmbeddingsCapability } from '../provider-adapter.ts';
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { protocolError, readJsonAnswer } from '../upstream-exchange.ts';
import { type BedrockEmbeddingFamily, embeddingFamilyOf } from './bedrock-embedding-models.ts';
import { classifyBedrockError } from './bedrock-errors.ts';

/** Sends one InvokeModel body for `model` (signed by the adapter) and answers the upstream's response. */
export type BedrockInvoke = (
  model: string,
  body: string,
  context: AttemptContext,
) => Promise<UpstreamResponse>;

const CALLS_IN_FLIGHT = 4;
/** Cohere Embed v3 models answer one vector size; v4 takes output_dimension. */
const FIXED_SIZE_COHERE = /cohere\.embed-(english|multilingual)-v3/;

interface Answer {
  vectors: number[][];
  tokens: number | undefined;
}

/** The embeddings capability of a deployment, or undefined when its model is not an embedding model. */
export function bedrockEmbeddings(
  settings: DeploymentSettings,
  modelId: string,
  invoke: BedrockInvoke,
): EmbeddingsCapability | undefined {
  const family = embeddingFamilyOf(modelId);
  return family === undefined ? undefined : new BedrockEmbeddings(settings, family, invoke);
}

class BedrockEmbeddings implements EmbeddingsCapability {
  private readonly params: Readonly<Record<string, unknown>>;
  private readonly family: BedrockEmbeddingFamily;
  private readonly invoke: BedrockInvoke;

  constructor(settings: DeploymentSettings, family: BedrockEmbeddingFamily, invoke: BedrockInvoke) {
    this.params = settings.params;
    this.family = family;
    this.invoke = invoke;
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    const family = this.family;
    const texts = embeddingTexts(request, family === 'cohere' ? 'Cohere Embed' : 'Amazon Titan');
    const bodyOf = family === 'cohere' ? this.cohereBody(request) : this.titanBody(request);
    const batches = inBatches(texts, family === 'cohere' ? COHERE_MAX_TEXTS : 1);
    const answers = await mapBounded(
      batches,
      CALLS_IN_FLIGHT,
      context.signal,
      async (batch, _index, signal) => {
        const response = await this.invoke(request.model, JSON.stringify(bodyOf(batch)), {
          ...context,
          signal,
        });
        if (response.status >= 400) throw await classifyBedrockError(response);
        const { parsed } = await readJsonAnswer(response);
        const answer = family === 'cohere' ? readCohere(parsed, batch.length) : readTitan(parsed);
        return { ...answer, tokens: answer.tokens ?? headerTokens(response.headers) };
      },
    );
    const tokens = answers.map((answer) => answer.tokens);
    return embeddingResult(
      request,
      answers.flatMap((answer) => answer.vectors),
      tokens.every(isCount) ? tokens.reduce((sum, count) => sum + count, 0) : undefined,
    );
  }

  /** Titan's body for one text: V2 takes dimensions and normalize, the multimodal model an output length. */
  private titanBody(request: EmbeddingRequest): (texts: string[]) => unknown {
    const dimensions = requestedDimensions(request);
    const normalize = request.normalize ?? this.params.normalize;
    if (request.normalize !== undefined && (this.family !== 'titan-v2' || typeof normalize !== 'boolean'))
      throw errors.invalidRequest(
        'normalize: only Titan Text Embeddings V2 takes it, as true or false',
        'normalize',
      );
    if (dimensions !== undefined && this.family === 'titan-v1') refuseDimensions(request.model);
    return ([inputText]) => ({
      inputText,
      ...(this.family === 'titan-v2' && dimensions !== undefined ? { dimensions } : {}),
      ...(this.family === 'titan-v2' && normalize !== undefined ? { normalize } : {}),
      ...(this.family === 'titan-multimodal' && dimensions !== undefined
        ? { embeddingConfig: { outputEmbeddingLength: dimensions } }
        : {}),
    });
  }

  /** Cohere Embed's body: the fields Cohere's own API takes, without the model (it is in the path). */
  private cohereBody(request: EmbeddingRequest): (texts: string[]) => unknown {
    const fields = cohereEmbedFields(request, this.params, FIXED_SIZE_COHERE);
    return (texts) => ({ texts, ...fields });
  }
}

/** Titan: `{embedding, inputTextTokenCount}` (V2 adds embeddingsByType, which holds the same floats). */
function readTitan(parsed: unknown): Answer {
  const answer = parsed as { embedding?: unknown; inputTextTokenCount?: unknown } | null;
  if (!isVector(answer?.embedding)) throw protocolError('the upstream answer is not a Titan embedding');
  const tokens = answer.inputTextTokenCount;
  return { vectors: [answer.embedding], tokens: isCount(tokens) ? tokens : undefined };
}

/** Cohere Embed: `embeddings` as a list of vectors, or by type (`{float: [...]}`) when types were asked. */
function readCohere(parsed: unknown, expected: number): Answer {
  const embeddings = (parsed as { embeddings?: unknown } | null)?.embeddings;
  const vectors = Array.isArray(embeddings) ? embeddings : (embeddings as { float?: unknown } | null)?.float;
  if (!Array.isArray(vectors) || vectors.length !== expected || !vectors.every(isVector))
    throw protocolError('the upstream answer is not a Cohere Embed response');
  return { vectors, tokens: undefined };
}

/** The input tokens Bedrock reports for an InvokeModel call in its response headers. */
function headerTokens(headers: ResponseHeaders): number | undefined {
  const value = headers['x-amzn-bedrock-input-token-count'];
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}
