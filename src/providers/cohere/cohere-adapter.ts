/**
 * The ProviderAdapter of Cohere's v2 API: embeddings (`/v2/embed`) and rerank (`/v2/rerank`) over one
 * pool per deployment. It serves no chat, so a text-mode group on it is refused at start.
 */
import type {
  AttemptContext,
  DeploymentSettings,
  EmbeddingsCapability,
  ProviderAdapter,
  RerankCapability,
} from '../provider-adapter.ts';
import { readJsonAnswer, sendRequest } from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { CohereEmbeddings } from './cohere-embeddings.ts';
import { classifyCohereError } from './cohere-errors.ts';
import { CohereRerank } from './cohere-rerank.ts';
import { type CohereEndpoint, cohereEndpoint } from './cohere-settings.ts';

/** Posts one JSON body to an operation of the deployment and answers its parsed JSON. */
export type CoherePost = (
  operation: 'embed' | 'rerank',
  body: unknown,
  context: AttemptContext,
) => Promise<unknown>;

export class CohereAdapter implements ProviderAdapter {
  readonly embeddings: EmbeddingsCapability;
  readonly rerank: RerankCapability;
  private readonly settings: DeploymentSettings;
  private readonly endpoint: CohereEndpoint;
  private readonly pool: UpstreamPool;

  constructor(settings: DeploymentSettings) {
    this.settings = settings;
    this.endpoint = cohereEndpoint(settings.params);
    this.pool = new UpstreamPool(this.endpoint.origin, settings);
    const post: CoherePost = (operation, body, context) => this.post(operation, body, context);
    this.embeddings = new CohereEmbeddings(settings, post);
    this.rerank = new CohereRerank(post);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async post(
    operation: 'embed' | 'rerank',
    body: unknown,
    context: AttemptContext,
  ): Promise<unknown> {
    const headers = {
      ...this.endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    const path = operation === 'embed' ? this.endpoint.embedPath : this.endpoint.rerankPath;
    const response = await sendRequest(
      this.pool,
      this.settings,
      { path, headers, body: JSON.stringify(body) },
      context,
      false,
    );
    if (response.status >= 400) throw classifyCohereError(response);
    return (await readJsonAnswer(response)).parsed;
  }
}
