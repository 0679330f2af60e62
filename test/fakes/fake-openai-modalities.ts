/**
 * The non-chat answers of the fake OpenAI-compatible upstream, in their real wire formats: embeddings
 * (floats, or base64 of little-endian float32 when asked), image generations (`url` or `b64_json`, with
 * gpt-image token usage), and rerank as vLLM answers it (`results` with documents, `usage`) or, for a
 * body with `texts`, as Text Embeddings Inference does (a bare list of `{index, score}`).
 */
import type { ServerResponse } from 'node:http';

export interface ModalityAnswerOptions {
  /** Leave usage out, as some servers do. */
  omitUsage?: boolean;
  /** Answer floats even when base64 was asked (servers that ignore encoding_format). */
  ignoreEncoding?: boolean;
  /** Embeddings: answer one vector fewer than the inputs (a broken answer). */
  dropLastEmbedding?: boolean;
}

/** How the fake embeds one input: its vector and the prompt tokens it reports for it. */
export interface FakeEmbedder {
  vector(input: string | number[]): number[];
  tokens(input: string | number[]): number;
}

/** The default: `fakeUpstreamVector`, one token per character or token-array item. */
export const defaultEmbedder: FakeEmbedder = {
  vector: (input) => fakeUpstreamVector(input),
  tokens: (input) => input.length,
};

/** The fake's answer for a non-chat operation path, or false when the path is chat. */
export function answerModality(
  path: string,
  body: any,
  options: ModalityAnswerOptions,
  response: ServerResponse,
  embedder: FakeEmbedder = defaultEmbedder,
): boolean {
  const operation = /\/(embeddings|images\/generations|rerank)(?:\?|$)/.exec(path)?.[1];
  if (!operation) return false;
  const payload =
    operation === 'embeddings'
      ? embeddings(body, options, embedder)
      : operation === 'rerank'
        ? rerank(body, options)
        : images(body, options);
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
  return true;
}

/** The fake's vector for one input: three components from its length and first character code. */
export function fakeUpstreamVector(input: string | number[]): number[] {
  const text = typeof input === 'string' ? input : input.join(' ');
  return [text.length, text.charCodeAt(0) || 0, 0.5];
}

function embeddings(body: any, options: ModalityAnswerOptions, embedder: FakeEmbedder) {
  const inputs: Array<string | number[]> =
    typeof body.input === 'string' || typeof body.input?.[0] === 'number' ? [body.input] : body.input;
  const base64 = body.encoding_format === 'base64' && !options.ignoreEncoding;
  const tokens = inputs.reduce((sum, input) => sum + embedder.tokens(input), 0);
  const answered = options.dropLastEmbedding ? inputs.slice(0, -1) : inputs;
  return {
    object: 'list',
    data: answered.map((input, index) => {
      const vector = embedder.vector(input);
      return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
    }),
    model: body.model,
    ...(options.omitUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}

function float32Base64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => {
    bytes.writeFloatLE(value, index * 4);
  });
  return bytes.toString('base64');
}

/** A 1×1 transparent PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function images(body: any, options: ModalityAnswerOptions) {
  const count = body.n ?? 1;
  const b64 = body.response_format === 'b64_json' || String(body.model).startsWith('gpt-image');
  const usage = String(body.model).startsWith('gpt-image') && !options.omitUsage;
  return {
    created: 1_700_000_000,
    data: Array.from({ length: count }, (_, index) =>
      b64
        ? { b64_json: PNG_BASE64 }
        : { url: `https://images.example.test/${index}.png`, revised_prompt: `revised: ${body.prompt}` },
    ),
    ...(usage
      ? {
          usage: {
            input_tokens: 10,
            output_tokens: 4160 * count,
            total_tokens: 10 + 4160 * count,
            input_tokens_details: { text_tokens: 10, image_tokens: 0 },
          },
        }
      : {}),
  };
}

/** Scores each document by how many of the query's words it contains (ties keep input order). */
function scores(query: string, documents: string[]): Array<{ index: number; score: number }> {
  const words = query.toLowerCase().split(/\W+/).filter(Boolean);
  return documents
    .map((document, index) => {
      const text = document.toLowerCase();
      const hits = words.filter((word) => text.includes(word)).length;
      return { index, score: words.length ? hits / words.length : 0 };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

function rerank(body: any, options: ModalityAnswerOptions) {
  if (Array.isArray(body.texts)) return scores(body.query, body.texts);
  const ranked = scores(body.query, body.documents);
  const kept = body.top_n ? ranked.slice(0, body.top_n) : ranked;
  const tokens = body.documents.join(' ').length + body.query.length;
  return {
    id: 'rerank-fake',
    model: body.model,
    results: kept.map(({ index, score }) => ({
      index,
      document: { text: body.documents[index] },
      relevance_score: score,
    })),
    ...(options.omitUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}
