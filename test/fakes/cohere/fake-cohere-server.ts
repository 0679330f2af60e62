/**
 * A fake Cohere v2 API on 127.0.0.1:0: a real node:http server answering `/v2/embed` with
 * `embeddings.float` and `meta.billed_units.input_tokens`, and `/v2/rerank` with results scored by the
 * words a document shares with the query, best first; errors in Cohere's `{"id", "message"}` shape.
 * Driven by a scenario per request and recording every request (STYLE convention 14).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type EmbeddingScenario,
  type FakeEmbeddingsUpstream,
  fakeTokens,
  fakeVector,
} from '../../support/embeddings-adapter-suite.ts';
import { LoopbackServer, type RecordedRequest, readBody, recordRequest } from '../loopback-server.ts';

export type CohereScenario =
  | EmbeddingScenario
  /** A file of ./fixtures sent as a 200 JSON answer, unchanged. */
  | { kind: 'fixture'; file: string }
  /** This JSON answer, unchanged. */
  | { kind: 'raw-json'; body: unknown };

export function readCohereFixture(file: string): any {
  return JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8'));
}

export class FakeCohereServer implements FakeEmbeddingsUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: CohereScenario[] = [];
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeCohereServer> {
    const fake = new FakeCohereServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  enqueue(...scenarios: CohereScenario[]): void {
    this.queue.push(...scenarios);
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const recorded = recordRequest(request, await readBody(request), response);
    this.requests.push(recorded);
    const scenario = this.queue.shift();
    const operation = recorded.path.split('?')[0]!.split('/').at(-1);
    switch (scenario?.kind) {
      case 'hang':
        return;
      case 'garbage':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>not cohere</html>');
        return;
      case 'error':
        writeError(response, scenario.status, scenario.secret, scenario.retryAfterSeconds);
        return;
      case 'fixture':
        return writeJson(response, readCohereFixture(scenario.file));
      case 'raw-json':
        return writeJson(response, scenario.body);
      case 'short-embeddings':
        return writeJson(response, embedAnswer((recorded.body?.texts ?? []).slice(1)));
      default:
        if (operation === 'embed') return writeJson(response, embedAnswer(recorded.body?.texts ?? []));
        if (operation === 'rerank') return writeJson(response, rerankAnswer(recorded.body));
        writeError(response, 404);
    }
  }
}

function embedAnswer(texts: string[]): object {
  return {
    id: 'fake-embed-0001',
    embeddings: { float: texts.map(fakeVector) },
    texts,
    meta: {
      api_version: { version: '2' },
      billed_units: { input_tokens: texts.reduce((sum, text) => sum + fakeTokens(text), 0) },
    },
    response_type: 'embeddings_by_type',
  };
}

/** Scores are the share of query words a document contains; ties keep document order. */
function rerankAnswer(body: { query: string; documents: string[]; top_n?: number }): object {
  const words = body.query.toLowerCase().split(/\W+/).filter(Boolean);
  const scored = body.documents.map((document, index) => {
    const have = new Set(document.toLowerCase().split(/\W+/));
    return { index, relevance_score: words.filter((word) => have.has(word)).length / words.length };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return {
    id: 'fake-rerank-0001',
    results: scored.slice(0, body.top_n ?? scored.length),
    meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
  };
}

function writeJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function writeError(
  response: ServerResponse,
  status: number,
  secret?: string,
  retryAfterSeconds?: number,
): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}),
  });
  response.end(
    JSON.stringify({ id: 'fake-error-0001', message: `invalid request: ${secret ?? 'fake Cohere error'}` }),
  );
}
