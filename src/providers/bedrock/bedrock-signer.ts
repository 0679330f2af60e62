/**
 * SigV4 signing of Bedrock runtime calls: one SignatureV4 per deployment, credentials from the params
 * or from the default AWS chain (read by the library: environment, shared files, SSO, container and
 * instance metadata), signed per request over exactly the headers and body that are sent.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { UpstreamError } from '../upstream-error.ts';
import type { BedrockEndpoint } from './bedrock-settings.ts';

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type CredentialSource = () => Promise<Credentials>;

export class BedrockSigner {
  private readonly endpoint: BedrockEndpoint;
  private readonly signer: SignatureV4;

  constructor(endpoint: BedrockEndpoint, source?: CredentialSource) {
    this.endpoint = endpoint;
    this.signer = new SignatureV4({
      service: 'bedrock',
      region: endpoint.region,
      credentials: endpoint.credentials ?? guarded(source ?? defaultProvider()),
      sha256: Sha256,
    });
  }

  /**
   * The headers to send with `body` on `path` (already URI-encoded; the signer escapes it once more,
   * as every AWS service but S3 expects). Throws UpstreamError when no credentials can be found.
   */
  async sign(
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string,
  ): Promise<Record<string, string>> {
    const { endpoint } = this;
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      ...(endpoint.port === undefined ? {} : { port: endpoint.port }),
      path,
      query: {},
      headers: { ...headers, host: endpoint.host },
      body,
    });
    return signed.headers;
  }
}

/** A credential chain failure becomes a classified, non-retryable error instead of an exception. */
function guarded(source: CredentialSource): CredentialSource {
  return async () => {
    try {
      return await source();
    } catch {
      throw new UpstreamError({
        kind: 'connect',
        retryable: false,
        message:
          'AWS credentials were not found: set aws_access_key_id and aws_secret_access_key, or configure the default AWS credential chain',
      });
    }
  };
}
