/**
 * Embeddings on an OpenAI-style deployment: the caller's request goes to `<base>/embeddings` as it came
 * (model swapped by the router), and the answer is checked (one vector per input, in order) and kept as
 * the upstream's JSON text when its encoding is the one the caller asked for. Servers that ignore
 * `encoding_format: base64` and answer floats are converted by the wire encoder instead.
 *
 * OpenAI and Azure are asked for base64 even when the caller wants floats (`base64Upstream`): their
 * floats are float32 values, so the wire encoder writes the same numbers from a quarter of the bytes,
 * and 2048 large vectors stay far below the size the gateway reads (as floats they do not).
 */

import type { EmbeddingRequest, EmbeddingResponse, EmbeddingResult } from '../../canonical/modalities.ts';
import { embeddingInputCount } from '../../canonical/modality-inputs.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';
import type { AttemptContext, EmbeddingsCapability } from '../provider-adapter.ts';
import { protocolError } from '../upstream-exchange.ts';
import type { OpenAiTransport } from './openai-transport.ts';

export interface OpenAiEmbeddingsOptions {
  /** Ask the upstream for base64 when the caller wants floats (only servers known to answer it). */
  base64Upstream?: boolean;
}

export class OpenAiEmbeddings implements EmbeddingsCapability {
  private readonly transport: OpenAiTransport;
  private readonly base64Upstream: boolean;

  constructor(transport: OpenAiTransport, options: OpenAiEmbeddingsOptions = {}) {
    this.transport = transport;
    this.base64Upstream = options.base64Upstream ?? false;
  }

  async embed(request: EmbeddingRequest, context: AttemptContext): Promise<EmbeddingResult> {
    const callerBase64 = request.encoding_format === 'base64';
    const upstream =
      this.base64Upstream && !callerBase64 ? { ...request, encoding_format: 'base64' } : request;
    const { text, parsed } = await this.transport.postJson('embeddings', upstream, context);
    const { response, ordered } = readEmbeddingResponse(parsed, embeddingInputCount(request.input));
    const usage = embeddingUsage(response.usage);
    const wanted = callerBase64 ? 'string' : 'object';
    // The upstream's text goes to the caller only when it is already what the caller asked for.
    const kept = ordered && response.data.every((item) => typeof item.embedding === wanted);
    return { response, ...(usage ? { usage } : {}), ...(kept ? { json: text } : {}) };
  }
}

/** Token usage of an embeddings call: prompt tokens only. */
export function embeddingUsage(usage: EmbeddingResponse['usage']): Usage | undefined {
  if (!usage) return undefined;
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens };
}

/**
 * An OpenAI embeddings answer, checked: a `data` list with one vector (floats, or base64 of float32) per
 * input and distinct indexes, sorted by index (`ordered` tells whether it came so); usage kept when its
 * counts are sane.
 */
export function readEmbeddingResponse(
  value: unknown,
  expected: number,
): { response: EmbeddingResponse; ordered: boolean } {
  const answer = value as { data?: unknown; model?: unknown; usage?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.data))
    throw protocolError('the upstream answer is not an embeddings list');
  if (answer.data.length !== expected)
    throw protocolError(`the upstream answered ${answer.data.length} embeddings for ${expected} inputs`);
  const data = answer.data.map((item: unknown) => readItem(item, expected));
  const ordered = data.every((item, position) => item.index === position);
  if (!ordered) data.sort((a, b) => a.index - b.index);
  if (data.some((item, position) => item.index !== position))
    throw protocolError('the upstream answered duplicate embedding indexes');
  const response: EmbeddingResponse = {
    object: 'list',
    data,
    model: typeof answer.model === 'string' ? answer.model : '',
  };
  const usage = answer.usage as { prompt_tokens?: unknown; total_tokens?: unknown } | undefined;
  if (usage && isCount(usage.prompt_tokens))
    response.usage = {
      prompt_tokens: usage.prompt_tokens,
      total_tokens: isCount(usage.total_tokens) ? usage.total_tokens : usage.prompt_tokens,
    };
  return { response, ordered };
}

function readItem(value: unknown, count: number): EmbeddingResponse['data'][number] {
  const item = value as { index?: unknown; embedding?: unknown } | null;
  if (item === null || typeof item !== 'object')
    throw protocolError('an upstream embedding is not an object');
  const { index, embedding } = item;
  if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count)
    throw protocolError('an upstream embedding has no valid index');
  if (typeof embedding === 'string') {
    if (!isFloat32Base64(embedding))
      throw protocolError('an upstream embedding is not base64 of float32 values');
  } else if (!Array.isArray(embedding) || !embedding.every((number) => typeof number === 'number')) {
    throw protocolError('an upstream embedding is not a list of numbers');
  }
  return { object: 'embedding', index: index as number, embedding: embedding as number[] | string };
}

/**
 * Padded base64 whose bytes are a whole number of float32 values. Only the shape is checked: scanning
 * every character of every vector was 3% of the embeddings path's CPU in the benchmark.
 */
function isFloat32Base64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return ((text.length / 4) * 3 - padding) % 4 === 0;
}
