/**
 * The `fake` provider's embeddings: a deterministic unit vector per input (the same text always gives
 * the same vector; `dimensions` sets its length, 16 by default), usage of about four characters per
 * token (a token array counts its length), after the deployment's latency and failure injection.
 */
import { createHash } from 'node:crypto';
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/modalities.ts';
import type { AttemptContext, EmbeddingsCapability } from '../provider-adapter.ts';

export const FAKE_EMBEDDING_DIMENSIONS = 16;
/** The longest vector the fake builds (OpenAI's largest model has 3072). */
const MAX_DIMENSIONS = 4096;

export class FakeEmbeddings implements EmbeddingsCapability {
  private readonly model: string;
  /** The adapter's latency and failure injection, run before each answer. */
  private readonly prepare: (context: AttemptContext) => Promise<void>;

  constructor(model: string, prepare: (context: AttemptContext) => Promise<void>) {
    this.model = model;
    this.prepare = prepare;
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    await this.prepare(context);
    const inputs = inputsOf(request.input);
    const dimensions = Math.min(request.dimensions ?? FAKE_EMBEDDING_DIMENSIONS, MAX_DIMENSIONS);
    const promptTokens = inputs.reduce(
      (sum, input) =>
        sum + (typeof input === 'string' ? Math.max(1, Math.ceil(input.length / 4)) : input.length),
      0,
    );
    return {
      response: {
        object: 'list',
        data: inputs.map((input, index) => ({
          object: 'embedding',
          index,
          embedding: fakeVector(input, dimensions),
        })),
        model: this.model,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      },
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
    };
  }
}

function inputsOf(input: EmbeddingRequest['input']): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}

/** A unit vector derived from the input's SHA-256 (counter mode for longer vectors). */
export function fakeVector(input: string | readonly number[], dimensions: number): number[] {
  const seed = typeof input === 'string' ? `text:${input}` : `tokens:${input.join(',')}`;
  const vector: number[] = [];
  for (let block = 0; vector.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${seed}`).digest();
    for (let offset = 0; offset + 4 <= digest.length && vector.length < dimensions; offset += 4)
      vector.push(digest.readUInt32LE(offset) / 0x7fffffff - 1);
  }
  const norm = Math.hypot(...vector) || 1;
  // Rounded to float32 precision, so base64 float32 encoding loses nothing.
  return vector.map((value) => Math.fround(value / norm));
}
