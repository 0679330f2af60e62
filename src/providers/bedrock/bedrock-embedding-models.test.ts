/** Which Bedrock model ids are called as embedding models, and through which body shape. */
import { describe, expect, it } from 'vitest';
import { embeddingFamilyOf } from './bedrock-embedding-models.ts';

describe('embeddingFamilyOf', () => {
  it.each([
    ['amazon.titan-embed-text-v2:0', 'titan-v2'],
    ['amazon.titan-embed-text-v1', 'titan-v1'],
    ['amazon.titan-embed-g1-text-02', 'titan-v1'],
    ['amazon.titan-embed-image-v1', 'titan-multimodal'],
    ['cohere.embed-english-v3', 'cohere'],
    ['cohere.embed-multilingual-v3', 'cohere'],
    ['us.cohere.embed-v4:0', 'cohere'],
    ['us-gov.cohere.embed-v4:0', 'cohere'],
    ['global.cohere.embed-v4:0', 'cohere'],
    ['arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0', 'titan-v2'],
  ])('reads %s as %s', (modelId, family) => {
    expect(embeddingFamilyOf(modelId)).toBe(family);
  });

  it.each([
    'anthropic.claude-3-5-sonnet-20240620-v1:0',
    'us.anthropic.claude-3-5-sonnet-20240620-v1:0',
    'amazon.titan-text-express-v1',
    'cohere.command-r-v1:0',
    'twelvelabs.marengo-embed-2-7-v1:0',
    '*',
  ])('reads %s as no embedding model', (modelId) => {
    expect(embeddingFamilyOf(modelId)).toBeUndefined();
  });
});
