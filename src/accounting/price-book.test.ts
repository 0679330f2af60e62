import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.ts';
import { PriceBook } from './price-book.ts';

const yaml = `
model_list:
  - model_name: table
    params: { model: openai/gpt-4o }
    model_info: { id: table-hit }
  - model_name: overridden
    params: { model: openai/gpt-4o }
    model_info: { id: overridden, input_cost_per_token: 0.000001, cache_read_input_token_cost: 0.0000001 }
  - model_name: azure
    params: { provider: azure, model: prod-east-deployment, api_base: 'https://example.openai.azure.com' }
    model_info: { id: azure-base, base_model: azure/gpt-4o-mini }
  - model_name: claude
    params: { model: 'anthropic/*' }
    model_info: { id: any-claude }
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo }
  - model_name: mystery
    params: { model: openai/ft-mystery-model }
    model_info: { id: mystery }
  - model_name: local
    params: { provider: hosted_vllm, model: llama, api_base: 'https://vllm.example' }
    model_info: { id: local, input_cost_per_token: 0.0000002, output_cost_per_token: 0.0000004, input_cost_per_query: 0.002 }
  - model_name: local-anything
    params: { provider: hosted_vllm, model: '*', api_base: 'https://vllm.example' }
    model_info: { id: local-wildcard }
`;

const usage = { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 };

function build() {
  return PriceBook.fromConfig(
    parseConfig(yaml, { env: {}, dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' }),
  );
}

describe('PriceBook', () => {
  it('prices a deployment from the table by (provider, model)', () => {
    const { book } = build();
    expect(book.pricesOf('table-hit')).toEqual({
      inputPerToken: 2.5e-6,
      outputPerToken: 10e-6,
      cachedInputPerToken: 1.25e-6,
    });
    expect(book.costOf('table-hit', usage)).toBeCloseTo(12.5, 9);
  });

  it('lets model_info override single rates and keeps the table for the rest', () => {
    const { book } = build();
    expect(book.pricesOf('overridden')).toEqual({
      inputPerToken: 1e-6,
      outputPerToken: 10e-6,
      cachedInputPerToken: 1e-7,
    });
    const cached = { ...usage, prompt_tokens_details: { cached_tokens: 500_000 } };
    expect(book.costOf('overridden', cached)).toBeCloseTo(0.5 + 0.05 + 10, 9);
  });

  it('prices an Azure deployment by its base_model (LiteLLM prefix accepted)', () => {
    const { book } = build();
    expect(book.pricesOf('azure-base')).toMatchObject({ inputPerToken: 0.15e-6, outputPerToken: 0.6e-6 });
  });

  it('prices a wildcard deployment by the model the caller named, and not without one', () => {
    const { book } = build();
    expect(book.pricesOf('any-claude')).toBeUndefined();
    expect(book.costOf('any-claude', usage)).toBeNull();
    expect(book.costOf('any-claude', usage, 'claude-3-5-haiku-latest')).toBeCloseTo(4.8, 9);
    expect(book.costOf('any-claude', usage, 'claude-3-5-haiku-latest')).toBeCloseTo(4.8, 9);
    expect(book.costOf('any-claude', usage, 'not-a-claude')).toBeNull();
  });

  it('costs the fake provider nothing, as a known price, in tokens and in every billed unit', () => {
    const { book } = build();
    expect(book.pricesOf('demo')).toMatchObject({ inputPerToken: 0, outputPerToken: 0 });
    expect(book.costOf('demo', usage)).toBe(0);
    const units = { images: 2, audioSeconds: 3, searches: 1, characters: 40 };
    expect(book.costOf('demo', undefined, 'demo', units)).toBe(0);
  });

  it('prices a provider the table lacks from model_info alone', () => {
    const { book } = build();
    expect(book.pricesOf('local')).toEqual({
      inputPerToken: 2e-7,
      outputPerToken: 4e-7,
      perRerankSearch: 0.002,
    });
    expect(book.costOf('local', usage)).toBeCloseTo(0.6, 9);
  });

  it('records an unknown price as a null cost and names each such deployment in a start-up warning', () => {
    const { book, warnings } = build();
    expect(book.pricesOf('mystery')).toBeUndefined();
    expect(book.costOf('mystery', usage)).toBeNull();
    expect(warnings).toEqual([
      'model_list[5] (deployment mystery, openai/ft-mystery-model): no known price, so its cost is recorded as null; set model_info.input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows',
      'model_list[7] (deployment local-wildcard, hosted_vllm/*): no known price, so its cost is recorded as null; set model_info.input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows',
    ]);
  });

  it('answers null for unknown usage and for a deployment it does not know', () => {
    const { book } = build();
    expect(book.costOf('table-hit', undefined)).toBeNull();
    expect(book.costOf('no-such-deployment', usage)).toBeNull();
  });

  it('drops the table’s long-context tiers when model_info sets a token rate', () => {
    const config = parseConfig(
      'model_list:\n  - { model_name: g, params: { model: gemini/gemini-2.5-pro }, model_info: { id: g } }\n  - { model_name: h, params: { model: gemini/gemini-2.5-pro }, model_info: { id: h, output_cost_per_token: 0.00001 } }\n',
      { env: {}, dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' },
    );
    const { book } = PriceBook.fromConfig(config);
    expect(book.pricesOf('g')?.tiers).toHaveLength(1);
    expect(book.pricesOf('h')?.tiers).toBeUndefined();
  });
});
