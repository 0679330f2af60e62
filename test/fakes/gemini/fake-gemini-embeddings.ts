/**
 * The fake Gemini API's `:batchEmbedContents`: `embeddings[].values` with the suite's vector for each
 * request's text, in request order, and no token counts (the Gemini API reports none for embeddings).
 */
import type { ServerResponse } from 'node:http';
import { fakeVector } from '../../support/embeddings-adapter-suite.ts';

export function isEmbeddingCall(path: string): boolean {
  return path.includes(':batchEmbedContents');
}

/** The answer to a batch; `short` leaves out the last vector (a malformed answer). */
export function writeEmbeddings(body: any, short: boolean, response: ServerResponse): void {
  const texts: string[] = (body?.requests ?? []).map((request: any) =>
    (request.content?.parts ?? []).map((part: any) => part.text ?? '').join(''),
  );
  const embeddings = texts.map((text) => ({ values: fakeVector(text) }));
  response
    .writeHead(200, { 'content-type': 'application/json; charset=UTF-8' })
    .end(JSON.stringify({ embeddings: short ? embeddings.slice(0, -1) : embeddings }));
}
