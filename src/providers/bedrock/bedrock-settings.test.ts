/** Bedrock params: validation messages, the model id and the endpoint they describe. */
import { describe, expect, it } from 'vitest';
import { bedrockEndpoint, bedrockModelId, validateBedrockParams } from './bedrock-settings.ts';

describe('bedrock params', () => {
  it('accepts a region alone (default credential chain) and explicit keys with a session token', () => {
    expect(validateBedrockParams({ model: 'm', aws_region_name: 'eu-central-1' })).toEqual([]);
    expect(
      validateBedrockParams({
        model: 'm',
        aws_region_name: 'us-gov-west-1',
        aws_access_key_id: 'AKIA',
        aws_secret_access_key: 's',
        aws_session_token: 't',
      }),
    ).toEqual([]);
  });

  it('names each problem by its key', () => {
    expect(
      validateBedrockParams({
        model: 'invoke/anthropic.claude',
        aws_region_name: 'us east 1',
        aws_secret_access_key: 's',
        aws_session_token: 7,
        api_key: 'k',
        headers: { a: 1 },
      }).map((problem) => problem.split(':')[0]),
    ).toEqual([
      'aws_region_name',
      'aws_session_token',
      'aws_access_key_id',
      'aws_session_token',
      'api_key',
      'model',
      'headers',
    ]);
  });

  it("strips LiteLLM's converse/ route and derives the regional endpoint", () => {
    expect(bedrockModelId('converse/anthropic.claude-3-5-sonnet-20240620-v1:0')).toBe(
      'anthropic.claude-3-5-sonnet-20240620-v1:0',
    );
    const endpoint = bedrockEndpoint('converse/m', { aws_region_name: 'eu-west-1', headers: { 'X-A': 'b' } });
    expect(endpoint).toMatchObject({
      origin: 'https://bedrock-runtime.eu-west-1.amazonaws.com',
      host: 'bedrock-runtime.eu-west-1.amazonaws.com',
      port: undefined,
      basePath: '',
      modelId: 'm',
      headers: { 'x-a': 'b' },
      credentials: undefined,
    });
  });
});
