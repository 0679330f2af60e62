/**
 * The fake Bedrock runtime's InvokeModel for embedding models: Titan answers `{embedding,
 * inputTextTokenCount, embeddingsByType}` for its one `inputText`, Cohere Embed answers `embeddings`
 * by type for its `texts`; both with the input tokens in `x-amzn-bedrock-input-token-count`, as Bedrock
 * sends them. Vectors and counts are the embeddings suite's.
 */
import type { ServerResponse } from 'node:http';
import { fakeTokens, fakeVector } from '../../support/embeddings-adapter-suite.ts';
import { FAKE_REQUEST_ID } from './fake-bedrock-answers.ts';

/** InvokeModel scenarios: a JSON answer as given, with the token header when `inputTokens` is set. */
export type InvokeScenario =
  | { kind: 'invoke-json'; body: object; inputTokens?: number }
  /** A well-formed answer missing a vector (Titan: no `embedding`; Cohere: one vector fewer). */
  | { kind: 'short-embeddings' };

export function isInvokeCall(path: string): boolean {
  return /\/invoke$/.test(path);
}

export function playInvoke(scenario: InvokeScenario | undefined, body: any, response: ServerResponse): void {
  if (scenario?.kind === 'invoke-json') {
    writeInvoke(response, scenario.body, scenario.inputTokens);
    return;
  }
  const short = scenario?.kind === 'short-embeddings';
  if (Array.isArray(body?.texts)) {
    const texts: string[] = body.texts;
    const vectors = texts.map(fakeVector);
    writeInvoke(
      response,
      {
        id: 'fake-cohere-embed-0001',
        embeddings: { float: short ? vectors.slice(1) : vectors },
        response_type: 'embeddings_by_type',
        texts,
      },
      texts.reduce((sum, text) => sum + fakeTokens(text), 0),
    );
    return;
  }
  const text = String(body?.inputText ?? '');
  const tokens = fakeTokens(text);
  writeInvoke(
    response,
    short
      ? { inputTextTokenCount: tokens }
      : {
          embedding: fakeVector(text),
          inputTextTokenCount: tokens,
          embeddingsByType: { float: fakeVector(text) },
        },
    tokens,
  );
}

function writeInvoke(response: ServerResponse, body: object, inputTokens?: number): void {
  response
    .writeHead(200, {
      'content-type': 'application/json',
      'x-amzn-requestid': FAKE_REQUEST_ID,
      ...(inputTokens !== undefined ? { 'x-amzn-bedrock-input-token-count': String(inputTokens) } : {}),
    })
    .end(JSON.stringify(body));
}
