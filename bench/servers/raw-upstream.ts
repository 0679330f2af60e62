/**
 * The benchmark's upstream: plain `node:http`, no framework, answering `POST …/chat/completions` in
 * the OpenAI wire format with a fixed JSON answer or an SSE stream, and `POST …/embeddings` with one
 * fixed vector per input. Run as a process it listens on loopback and prints `{"port": N}` on its first
 * stdout line.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { completionJson, streamEvents } from './chat-payloads.ts';
import { embeddingsJson } from './embedding-payloads.ts';

export interface RawUpstreamOptions {
  /** Content chunks per stream. */
  chunkCount: number;
  /** Pause between stream events; 0 writes the whole stream at once. */
  chunkDelayMs: number;
}

export function createRawUpstream(options: RawUpstreamOptions): Server {
  const json = Buffer.from(completionJson());
  const toBuffers = (includeUsage: boolean) =>
    streamEvents({ chunkCount: options.chunkCount, includeUsage }).map((event) => Buffer.from(event));
  const plainStream = toBuffers(false);
  const usageStream = toBuffers(true);
  // Answers by input count and encoding, built on first use.
  const embeddings = new Map<string, Buffer>();
  const embeddingsAnswer = (count: number, base64: boolean) => {
    const key = `${count}:${base64}`;
    let answer = embeddings.get(key);
    if (!answer) {
      answer = Buffer.from(embeddingsJson(count, base64));
      embeddings.set(key, answer);
    }
    return answer;
  };

  return createServer({ keepAliveTimeout: 75_000 }, (request, response) => {
    const embedding = request.url?.endsWith('/embeddings') === true;
    if (request.method !== 'POST' || !(embedding || request.url?.endsWith('/chat/completions'))) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.on('end', () => {
      let body: {
        stream?: unknown;
        stream_options?: { include_usage?: unknown };
        input?: unknown;
        encoding_format?: unknown;
      };
      try {
        body = JSON.parse(Buffer.concat(pieces).toString('utf8'));
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"invalid JSON","type":"invalid_request_error"}}');
        return;
      }
      if (embedding) {
        const count = Array.isArray(body.input) && typeof body.input[0] !== 'number' ? body.input.length : 1;
        const answer = embeddingsAnswer(count, body.encoding_format === 'base64');
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
        response.end(answer);
        return;
      }
      if (body.stream === true) {
        const events = body.stream_options?.include_usage === true ? usageStream : plainStream;
        writeStream(response, events, options.chunkDelayMs);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
      response.end(json);
    });
  });
}

function writeStream(response: ServerResponse, events: readonly Buffer[], delayMs: number): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (delayMs <= 0) {
    for (const event of events) response.write(event);
    response.end();
    return;
  }
  let index = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    if (response.destroyed) return;
    response.write(events[index++]!);
    if (index === events.length) response.end();
    else timer = setTimeout(next, delayMs);
  };
  response.on('close', () => clearTimeout(timer));
  next();
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      chunks: { type: 'string', default: '20' },
      'chunk-delay-ms': { type: 'string', default: '0' },
    },
  });
  const server = createRawUpstream({
    chunkCount: Number(values.chunks),
    chunkDelayMs: Number(values['chunk-delay-ms']),
  });
  server.listen(Number(values.port), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
