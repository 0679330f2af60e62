/**
 * How one ElevenLabs deployment is reached: its endpoint and connection pool, shared by the speech and
 * transcription capabilities so both use the deployment's pool and timeouts.
 */
import type { AttemptContext, DeploymentSettings } from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { sendRequest } from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import type { ElevenLabsEndpoint } from './elevenlabs-settings.ts';

export interface ElevenLabsCall {
  /** Under `/v1`, with any query string: `text-to-speech/<voice>/stream?output_format=…`. */
  operation: string;
  contentType: string;
  accept: string;
  body: string | AsyncIterable<Uint8Array>;
  /** Read as it arrives, with the stream timeouts. */
  streaming: boolean;
}

export class ElevenLabsClient {
  readonly endpoint: ElevenLabsEndpoint;
  readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;

  constructor(endpoint: ElevenLabsEndpoint, settings: DeploymentSettings) {
    this.endpoint = endpoint;
    this.settings = settings;
    this.pool = new UpstreamPool(endpoint.origin, settings);
  }

  send(call: ElevenLabsCall, context: AttemptContext): Promise<UpstreamResponse> {
    const headers = {
      ...this.endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': call.contentType,
      accept: call.accept,
    };
    return sendRequest(
      this.pool,
      this.settings,
      { path: `${this.endpoint.prefix}/v1/${call.operation}`, headers, body: call.body },
      context,
      call.streaming,
    );
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
