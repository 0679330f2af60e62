import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { parseConfig } from '../config/load-config.ts';
import { PriceBook } from './price-book.ts';

const options = { env: {}, dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' };

function book(yaml: string) {
  return PriceBook.fromConfig(parseConfig(yaml, options));
}

const priced = book(`
model_list:
  - model_name: tts
    params: { model: openai/tts-1 }
    model_info: { id: tts, mode: audio_speech, input_cost_per_character: 0.000015 }
  - model_name: flux
    params: { provider: hosted_vllm, model: flux-dev, api_base: 'https://images.example' }
    model_info: { id: flux, mode: image_generation, output_cost_per_image: 0.025 }
  - model_name: gpt-image
    params: { model: openai/gpt-image-1 }
    model_info: { id: gpt-image, mode: image_generation }
  - model_name: gpt-image-flat
    params: { model: openai/gpt-image-1 }
    model_info: { id: gpt-image-flat, mode: image_generation, output_cost_per_image: 0.042 }
  - model_name: whisper
    params: { model: openai/whisper-1 }
    model_info: { id: whisper, mode: audio_transcription }
  - model_name: rerank
    params: { provider: hosted_vllm, model: bge-reranker, api_base: 'https://rerank.example' }
    model_info: { id: rerank, mode: rerank, input_cost_per_query: 0.002 }
  - model_name: embed
    params: { provider: hosted_vllm, model: bge-m3, api_base: 'https://embed.example' }
    model_info: { id: embed, mode: embedding, input_cost_per_token: 0.00000002 }
`);

describe('PriceBook: non-token prices (rule: a deployment priced only per unit has a price)', () => {
  it('prices a speech model per character, with no token rates at all', () => {
    expect(priced.book.pricesOf('tts')).toEqual({ perCharacter: 15e-6 });
    expect(priced.book.costOf('tts', undefined, 'tts-1', { characters: 2000 })).toBeCloseTo(0.03, 12);
  });

  it('prices an image model per generated image (output_cost_per_image), and is null for tokens it has no rate for', () => {
    expect(priced.book.costOf('flux', undefined, 'flux-dev', { images: 4 })).toBeCloseTo(0.1, 12);
    const empty = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    expect(priced.book.costOf('flux', empty, 'flux-dev', { images: 1 })).toBeCloseTo(0.025, 12);
    const chatty = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
    expect(priced.book.costOf('flux', chatty, 'flux-dev')).toBeNull();
  });

  it('prices gpt-image-1 by the table’s token rates, and by the per-image override when one is set', () => {
    const reported = { prompt_tokens: 20, completion_tokens: 4160, total_tokens: 4180 };
    expect(priced.book.costOf('gpt-image', reported, 'gpt-image-1', { images: 1 })).toBeCloseTo(
      20 * 5e-6 + 4160 * 40e-6,
      12,
    );
    expect(priced.book.costOf('gpt-image', undefined, 'gpt-image-1', { images: 1 })).toBeNull();
    expect(priced.book.costOf('gpt-image-flat', reported, 'gpt-image-1', { images: 2 })).toBeCloseTo(
      0.084,
      12,
    );
  });

  it('prices whisper-1 per second of audio from the table', () => {
    expect(priced.book.costOf('whisper', undefined, 'whisper-1', { audioSeconds: 90 })).toBeCloseTo(
      90 * (0.36 / 3600),
      12,
    );
  });

  it('prices a rerank search and an embedding with only an input token rate', () => {
    expect(priced.book.costOf('rerank', undefined, 'bge-reranker', { searches: 3 })).toBeCloseTo(0.006, 12);
    const embedded = { prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1_000_000 };
    expect(priced.book.costOf('embed', embedded, 'bge-m3')).toBeCloseTo(0.02, 12);
  });

  it('is null for a unit the deployment has no rate for, and for a call with neither usage nor units', () => {
    expect(priced.book.costOf('tts', undefined, 'tts-1', { images: 1 })).toBeNull();
    expect(priced.book.costOf('tts', undefined, 'tts-1')).toBeNull();
  });

  it('warns about none of them: each has the price its mode needs', () => {
    expect(priced.warnings).toEqual([]);
  });
});

describe('PriceBook: the start-up warning names the key each mode needs', () => {
  const { warnings } = book(`
model_list:
  - model_name: chat
    params: { model: openai/ft-mystery }
    model_info: { id: chat }
  - model_name: embed
    params: { provider: hosted_vllm, model: bge-m3, api_base: 'https://embed.example' }
    model_info: { id: embed, mode: embedding, output_cost_per_token: 0.000001 }
  - model_name: image
    params: { model: openai/dall-e-3 }
    model_info: { id: image, mode: image_generation, input_cost_per_token: 0.000005 }
  - model_name: speech
    params: { model: openai/gpt-4o-mini-tts }
    model_info: { id: speech, mode: audio_speech }
  - model_name: speech-any
    params: { model: 'openai/*' }
    model_info: { id: speech-any, mode: audio_speech }
  - model_name: transcribe
    params: { provider: hosted_vllm, model: whisper, api_base: 'https://stt.example' }
    model_info: { id: transcribe, mode: audio_transcription }
  - model_name: rerank
    params: { provider: hosted_vllm, model: bge-reranker, api_base: 'https://rerank.example' }
    model_info: { id: rerank, mode: rerank, output_cost_per_token: 0.000001 }
  - model_name: image-any
    params: { model: 'openai/*' }
    model_info: { id: image-any, mode: image_generation }
`);

  it('gives one warning per deployment without a usable price for its mode, with the keys to set', () => {
    expect(warnings).toEqual([
      'model_list[0] (deployment chat, openai/ft-mystery): no known price, so its cost is recorded as null; set model_info.input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows',
      'model_list[1] (deployment embed, hosted_vllm/bge-m3, mode embedding): no known price per input token, so its cost is recorded as null; set model_info.input_cost_per_token, or model_info.base_model to a model the price table knows',
      'model_list[2] (deployment image, openai/dall-e-3, mode image_generation): no known price per image or per token, so its cost is recorded as null; set model_info.output_cost_per_image (per generated image), or input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows',
      // gpt-4o-mini-tts has table token rates, but a speech answer reports characters, not tokens.
      'model_list[3] (deployment speech, openai/gpt-4o-mini-tts, mode audio_speech): no known price per character, so its cost is recorded as null; set model_info.input_cost_per_character',
      // A wildcard is priced per request from the table, which has no per-character prices.
      'model_list[4] (deployment speech-any, openai/*, mode audio_speech): no known price per character, so its cost is recorded as null; set model_info.input_cost_per_character',
      'model_list[5] (deployment transcribe, hosted_vllm/whisper, mode audio_transcription): no known price per second of audio or per token, so its cost is recorded as null; set model_info.input_cost_per_second, or input_cost_per_token and output_cost_per_token, or model_info.base_model to a model the price table knows',
      'model_list[6] (deployment rerank, hosted_vllm/bge-reranker, mode rerank): no known price per search or per token, so its cost is recorded as null; set model_info.input_cost_per_query, or input_cost_per_token, or model_info.base_model to a model the price table knows',
    ]);
  });
});

describe('model_info unit price keys in the configuration', () => {
  const entry = (info: string) =>
    `model_list:\n  - { model_name: a, params: { provider: fake, model: a }, model_info: { ${info} } }\n`;

  it('accepts the unit and audio-token price keys as read prices that reach the deployment’s price', () => {
    const config = parseConfig(
      entry(
        'id: a, output_cost_per_image: 0.04, input_cost_per_character: 0.000015, input_cost_per_audio_token: 0.00004, output_cost_per_audio_token: 0.00008',
      ),
      options,
    );
    expect(config.warnings).toEqual([]);
    expect(PriceBook.fromConfig(config).book.pricesOf('a')).toEqual({
      // The fake provider's table price (free in every unit), with the overrides on top.
      inputPerToken: 0,
      outputPerToken: 0,
      perImage: 0.04,
      perAudioSecond: 0,
      perRerankSearch: 0,
      perCharacter: 0.000015,
      audioInputPerToken: 0.00004,
      audioOutputPerToken: 0.00008,
    });
  });

  it('refuses a negative or non-numeric unit price, naming its path', () => {
    for (const key of [
      'output_cost_per_image',
      'input_cost_per_character',
      'input_cost_per_second',
      'input_cost_per_query',
      'input_cost_per_audio_token',
      'output_cost_per_audio_token',
    ]) {
      for (const value of ['-0.01', '"cheap"']) {
        let issues: readonly string[] = [];
        try {
          parseConfig(entry(`${key}: ${value}`), options);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          issues = error.issues;
        }
        expect(issues.join('\n')).toContain(`model_list[0].model_info.${key}`);
      }
    }
  });

  it('treats input_cost_per_image (LiteLLM: per input image, which no call counts) as descriptive', () => {
    expect(parseConfig(entry('input_cost_per_image: 0.01'), options).warnings).toEqual([
      'model_info.input_cost_per_image (1 deployment) is not read by Switchboard: descriptive only',
    ]);
  });
});

describe('the fake provider (tests, demos and the bench)', () => {
  it('has a price for every mode, so a fake deployment of any mode starts without a price warning', () => {
    const modes = ['chat', 'embedding', 'image_generation', 'audio_speech', 'audio_transcription', 'rerank'];
    const yaml = `model_list:\n${modes
      .map(
        (mode) =>
          `  - { model_name: ${mode}, params: { provider: fake, model: ${mode} }, model_info: { mode: ${mode} } }`,
      )
      .join('\n')}\n`;
    expect(book(yaml).warnings).toEqual([]);
  });
});
