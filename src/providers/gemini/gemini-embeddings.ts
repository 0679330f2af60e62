/**
 * Embeddings through the Gemini API's `models/<model>:batchEmbedContents`: one request per text
 * (`content.parts[].text`, `outputDimensionality` from `dimensions`, `taskType` from the caller's or the
 * deployment's `task_type`), at most 100 per call; `embeddings[].values` back in input order. The Gemini
 * API reports no tokens for embeddings, so the answer carries no usage (never an estimate).
 */
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { mapBounded } from '../bounded-map.ts';
import {
  embeddingResult,
  embeddingTexts,
  inBatches,
  isVector,
  requestedDimensions,
} from '../embedding-vectors.ts';
import type { AttemptContext, DeploymentSettings, EmbeddingsCapability } from '../provider-adapter.ts';
import { protocolError, readJsonAnswer, sendRequest } from '../upstream-exchange.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import { type GeminiTaskType, TASK_TYPE_EXPECTED, taskTypeOf } from './gemini-embedding-settings.ts';
import { classifyGeminiErrorResponse } from './gemini-errors.ts';
import { type GeminiEndpoint, modelName } from './gemini-settings.ts';

/** The Gemini API's most requests in one batchEmbedContents call. */
export const GEMINI_MAX_BATCH = 100;
const BATCH_CONCURRENCY = 4;

export class GeminiEmbeddings implements EmbeddingsCapability {
  private readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;
  private readonly endpointOf: (model: string) => GeminiEndpoint;
  private readonly taskType: GeminiTaskType | undefined;

  constructor(
    settings: DeploymentSettings,
    pool: UpstreamPool,
    endpointOf: (model: string) => GeminiEndpoint,
  ) {
    this.settings = settings;
    this.pool = pool;
    this.endpointOf = endpointOf;
    this.taskType = taskTypeOf(settings.params.task_type);
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    const texts = embeddingTexts(request, 'Gemini');
    const dimensions = requestedDimensions(request);
    const taskType = request.task_type === undefined ? this.taskType : taskTypeOf(request.task_type);
    if (request.task_type !== undefined && taskType === undefined)
      throw errors.invalidRequest(`task_type: must be ${TASK_TYPE_EXPECTED}`, 'task_type');
    const endpoint = this.endpointOf(request.model);
    const model = `models/${modelName(request.model)}`;
    const vectors = await mapBounded(
      inBatches(texts, GEMINI_MAX_BATCH),
      BATCH_CONCURRENCY,
      context.signal,
      (batch, _index, signal) => {
        const requests = batch.map((text) => ({
          model,
          content: { parts: [{ text }] },
          ...(taskType ? { taskType } : {}),
          ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
        }));
        return this.call(endpoint, { requests }, batch.length, { ...context, signal });
      },
    );
    return embeddingResult(request, vectors.flat(), undefined);
  }

  private async call(
    endpoint: GeminiEndpoint,
    body: unknown,
    expected: number,
    context: AttemptContext,
  ): Promise<number[][]> {
    const headers = {
      ...endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    const path = batchEmbedPath(endpoint);
    const response = await sendRequest(
      this.pool,
      this.settings,
      { path, headers, body: JSON.stringify(body) },
      context,
      false,
    );
    if (response.status >= 400) throw await classifyGeminiErrorResponse(response);
    const { parsed } = await readJsonAnswer(response);
    const embeddings = (parsed as { embeddings?: unknown } | null)?.embeddings;
    if (!Array.isArray(embeddings) || embeddings.length !== expected)
      throw protocolError('the upstream answer is not a batchEmbedContents response');
    return embeddings.map((embedding: { values?: unknown } | null) => {
      if (!isVector(embedding?.values)) throw protocolError('an upstream embedding has no values');
      return embedding.values;
    });
  }
}

/** `…/models/<model>:batchEmbedContents` beside the deployment's `:generateContent`, same query. */
function batchEmbedPath(endpoint: GeminiEndpoint): string {
  return endpoint.completePath.replace(':generateContent', ':batchEmbedContents');
}
