/**
 * The raw upstream's embeddings answers, in OpenAI's wire format: one fixed 1,536-dimension vector per
 * input (text-embedding-3-small's size), as base64 of little-endian float32 or as floats, built once
 * per input count so the upstream spends its time on HTTP.
 */

const DIMENSIONS = 1536;
const MODEL = 'bench-upstream-embedding-model';

const vector = Array.from({ length: DIMENSIONS }, (_, index) => Math.fround(Math.sin(index + 1) / 40));
const base64Vector = (() => {
  const bytes = Buffer.alloc(DIMENSIONS * 4);
  vector.forEach((value, index) => {
    bytes.writeFloatLE(value, index * 4);
  });
  return bytes.toString('base64');
})();

/** The answer to `count` inputs, as sent on the wire. */
export function embeddingsJson(count: number, base64: boolean): string {
  return JSON.stringify({
    object: 'list',
    data: Array.from({ length: count }, (_, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? base64Vector : vector,
    })),
    model: MODEL,
    usage: { prompt_tokens: 23 * count, total_tokens: 23 * count },
  });
}
