/**
 * Image generation on an OpenAI-style deployment: the caller's request goes to
 * `<base>/images/generations` as it came (model swapped by the router); the answer is checked (every
 * image a `url` or `b64_json`) and kept as the upstream's JSON text. Billed by the images returned;
 * gpt-image models also report tokens (`input_tokens`/`output_tokens`), kept as usage.
 */
import type { ImageRequest, ImageResponse, ImageResult } from '../../canonical/modalities.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';
import type { AttemptContext, ImagesCapability } from '../provider-adapter.ts';
import { protocolError } from '../upstream-exchange.ts';
import type { OpenAiTransport } from './openai-transport.ts';

export class OpenAiImages implements ImagesCapability {
  private readonly transport: OpenAiTransport;

  constructor(transport: OpenAiTransport) {
    this.transport = transport;
  }

  async generate(request: ImageRequest, context: AttemptContext): Promise<ImageResult> {
    const { text, parsed } = await this.transport.postJson('images/generations', request, context);
    const response = readImageResponse(parsed);
    const usage = imageUsage(response.usage);
    return { response, json: text, units: { images: response.data.length }, ...(usage ? { usage } : {}) };
  }
}

/** An OpenAI images answer, checked: `data` is a list of images, each with a `url` or `b64_json` string. */
export function readImageResponse(value: unknown): ImageResponse {
  const answer = value as { created?: unknown; data?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.data))
    throw protocolError('the upstream answer is not an images response');
  for (const image of answer.data as unknown[]) {
    const { url, b64_json } = (image ?? {}) as { url?: unknown; b64_json?: unknown };
    if (typeof url !== 'string' && typeof b64_json !== 'string')
      throw protocolError('an upstream image has neither url nor b64_json');
  }
  if (typeof answer.created !== 'number')
    throw protocolError('the upstream images answer has no created time');
  return answer as ImageResponse;
}

/** gpt-image's token usage (input_tokens, output_tokens) as prompt and completion tokens. */
export function imageUsage(usage: ImageResponse['usage']): Usage | undefined {
  const input = usage?.input_tokens;
  const output = usage?.output_tokens ?? 0;
  if (!isCount(input) || !isCount(output)) return undefined;
  const total = isCount(usage?.total_tokens) ? usage.total_tokens : input + output;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: total };
}
