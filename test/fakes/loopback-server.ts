/**
 * The plumbing every fake upstream shares: a real node:http server on 127.0.0.1:0, each request's body
 * read and recorded (marked `aborted` when the caller goes away before the answer ends), and a close that
 * destroys answers still open. The fakes keep only their wire format and scenarios.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON (undefined when empty). */
  body: any;
  /** Set when the connection closed before the answer was complete (the caller aborted). */
  aborted: boolean;
}

export class LoopbackServer {
  private readonly server: Server;
  private readonly responses = new Set<ServerResponse>();

  private constructor(handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>) {
    this.server = createServer((request, response) => {
      this.responses.add(response);
      response.on('close', () => this.responses.delete(response));
      void handle(request, response);
    });
  }

  static async listen(
    handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  ): Promise<LoopbackServer> {
    const loopback = new LoopbackServer(handle);
    await new Promise<void>((resolve) => loopback.server.listen(0, '127.0.0.1', resolve));
    return loopback;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const response of this.responses) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Reads a request's whole body. */
export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The record of a request whose body was read, kept up to date if the caller aborts. */
export function recordRequest(
  request: IncomingMessage,
  raw: Buffer,
  response: ServerResponse,
): RecordedRequest {
  const text = raw.toString('utf8');
  const recorded: RecordedRequest = {
    method: request.method ?? '',
    path: request.url ?? '',
    headers: request.headers,
    body: text ? JSON.parse(text) : undefined,
    aborted: false,
  };
  response.on('close', () => {
    if (!response.writableFinished) recorded.aborted = true;
  });
  return recorded;
}
