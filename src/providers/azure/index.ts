/**
 * Azure OpenAI: the OpenAI wire format at `<api_base>/openai/deployments/<deployment>/<operation>`
 * with an `api-version` query parameter and the key in an `api-key` header. `params.model` is the
 * Azure deployment name.
 */
import { OpenAiCompatibleAdapter } from '../openai/openai-compatible-adapter.ts';
import { extraHeaders } from '../openai/openai-settings.ts';
import { REQUEST_DEFAULT_PARAMS } from '../openai/request-defaults.ts';
import type { ProviderFactory } from '../provider-adapter.ts';

const DEFAULT_API_VERSION = '2024-10-21';

export const azureProvider: ProviderFactory = {
  name: 'azure',
  knownParams: [
    'api_base',
    'api_key',
    'api_version',
    'azure_ad_token',
    'headers',
    'extra_headers',
    ...REQUEST_DEFAULT_PARAMS,
  ],
  validate(params) {
    const problems: string[] = [];
    if (params.api_base === undefined)
      problems.push('api_base: is required for azure (https://<resource>.openai.azure.com)');
    for (const key of ['api_key', 'api_version', 'azure_ad_token'] as const) {
      if (params[key] !== undefined && typeof params[key] !== 'string')
        problems.push(`${key}: must be a string`);
    }
    return problems;
  },
  create(settings) {
    const { params } = settings;
    const base = new URL(String(params.api_base));
    const version = encodeURIComponent(String(params.api_version ?? DEFAULT_API_VERSION));
    const headers = extraHeaders(params);
    if (typeof params.api_key === 'string' && params.api_key) headers['api-key'] = params.api_key;
    // An Entra ID (Azure AD) token authenticates as a bearer token, as LiteLLM sends azure_ad_token.
    if (typeof params.azure_ad_token === 'string' && params.azure_ad_token)
      headers.authorization = `Bearer ${params.azure_ad_token}`;
    const root = `${base.pathname.replace(/\/+$/, '')}/openai/deployments/${encodeURIComponent(settings.model)}`;
    const pathOf = (operation: string) => `${root}/${operation}?api-version=${version}`;
    // Azure OpenAI answers base64 embeddings: asked for them, the answer is a quarter of the floats' size.
    const adapter = new OpenAiCompatibleAdapter(
      { origin: base.origin, path: pathOf('chat/completions'), pathOf, headers },
      settings,
      { base64Upstream: true },
    );
    // Azure OpenAI has no rerank operation: without the capability a rerank group on azure is refused at start.
    const { chat, embeddings, images, speech, transcription } = adapter;
    return { chat, embeddings, images, speech, transcription, close: () => adapter.close() };
  },
};
