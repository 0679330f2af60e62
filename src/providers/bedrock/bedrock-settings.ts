/**
 * Params of a Bedrock deployment (LiteLLM's names), their validation, and the endpoint and credentials
 * they describe.
 */
import { extraHeaders } from '../openai/openai-settings.ts';
import { embeddingParamProblems } from './bedrock-embedding-models.ts';

/** The request fields a Bedrock deployment may give a default for (the caller's value wins). */
export const BEDROCK_DEFAULT_PARAMS = ['temperature', 'top_p', 'max_tokens', 'stop'] as const;

export const bedrockParams = [
  'aws_region_name',
  'aws_access_key_id',
  'aws_secret_access_key',
  'aws_session_token',
  'api_base',
  'headers',
  'extra_headers',
  'normalize',
  'input_type',
  'truncate',
  ...BEDROCK_DEFAULT_PARAMS,
] as const;

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockEndpoint {
  /** `https://host[:port]`, for the connection pool. */
  origin: string;
  protocol: string;
  hostname: string;
  port: number | undefined;
  /** The Host header as sent and signed (`hostname[:port]`). */
  host: string;
  /** Path prefix of `api_base` (without a trailing slash), usually empty. */
  basePath: string;
  region: string;
  /** The model or inference-profile id, `converse/` stripped; not yet URI-encoded. */
  modelId: string;
  headers: Readonly<Record<string, string>>;
  /** Explicit credentials; undefined selects the default credential chain. */
  credentials: StaticCredentials | undefined;
}

const REGION = /^[a-z]{2}(-[a-z0-9]+)+-\d+$/;

export function validateBedrockParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const region = params.aws_region_name;
  if (region === undefined)
    problems.push('aws_region_name: is required for bedrock (the AWS region, e.g. us-east-1)');
  else if (typeof region !== 'string' || !REGION.test(region))
    problems.push('aws_region_name: must be an AWS region name such as us-east-1');
  for (const key of ['aws_access_key_id', 'aws_secret_access_key', 'aws_session_token'] as const) {
    if (params[key] !== undefined && (typeof params[key] !== 'string' || params[key] === ''))
      problems.push(`${key}: must be a non-empty string`);
  }
  if ((params.aws_access_key_id === undefined) !== (params.aws_secret_access_key === undefined))
    problems.push(
      'aws_access_key_id: aws_access_key_id and aws_secret_access_key are given together or not at all',
    );
  if (params.aws_session_token !== undefined && params.aws_access_key_id === undefined)
    problems.push('aws_session_token: needs aws_access_key_id and aws_secret_access_key');
  if (params.api_key !== undefined)
    problems.push(
      'api_key: Bedrock API keys (bearer tokens) are not supported; use aws_access_key_id and aws_secret_access_key, or the default AWS credential chain',
    );
  if (typeof params.model === 'string' && params.model.startsWith('invoke/'))
    problems.push(
      "model: 'invoke/' selects LiteLLM's InvokeModel route for chat; Switchboard calls chat models through the Converse API and embedding models through InvokeModel (write the model id, or converse/<id>)",
    );
  if (typeof params.model === 'string')
    problems.push(...embeddingParamProblems(params, bedrockModelId(params.model)));
  for (const key of ['headers', 'extra_headers'] as const) {
    const headers = params[key];
    if (
      headers !== undefined &&
      (headers === null ||
        typeof headers !== 'object' ||
        Object.values(headers).some((value) => typeof value !== 'string'))
    )
      problems.push(`${key}: must be a map of header names to strings`);
  }
  return problems;
}

/** The model id Bedrock is called with: LiteLLM's `converse/` route prefix is dropped. */
export function bedrockModelId(model: string): string {
  return model.startsWith('converse/') ? model.slice('converse/'.length) : model;
}

export function bedrockEndpoint(model: string, params: Readonly<Record<string, unknown>>): BedrockEndpoint {
  const region = String(params.aws_region_name);
  const base = new URL(
    typeof params.api_base === 'string' ? params.api_base : `https://bedrock-runtime.${region}.amazonaws.com`,
  );
  const port = base.port === '' ? undefined : Number(base.port);
  const headers: Record<string, string> = {};
  // Header names are lower-cased so that the signed names and the sent names are the same strings.
  for (const [name, value] of Object.entries(extraHeaders(params))) headers[name.toLowerCase()] = value;
  return {
    origin: base.origin,
    protocol: base.protocol,
    hostname: base.hostname,
    port,
    host: base.host,
    basePath: base.pathname.replace(/\/+$/, ''),
    region,
    modelId: bedrockModelId(model),
    headers,
    credentials: staticCredentials(params),
  };
}

function staticCredentials(params: Readonly<Record<string, unknown>>): StaticCredentials | undefined {
  const { aws_access_key_id: accessKeyId, aws_secret_access_key: secretAccessKey } = params;
  if (typeof accessKeyId !== 'string' || typeof secretAccessKey !== 'string') return undefined;
  const sessionToken = params.aws_session_token;
  return {
    accessKeyId,
    secretAccessKey,
    ...(typeof sessionToken === 'string' ? { sessionToken } : {}),
  };
}
