/**
 * Real MCP upstreams for tests, built with the official SDK's server pieces over Streamable HTTP on
 * 127.0.0.1:0. `stateful` issues session ids and answers with SSE (and can expire its sessions to test
 * re-initialization); `stateless` answers plain JSON without sessions. Both record every HTTP request
 * they receive (headers included), optionally demand a bearer token, and serve the same tools.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface RecordedRequest {
  method: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON-RPC body (POST only). */
  body: any;
  /** True once the caller closed the connection before the answer was complete (an aborted request). */
  aborted: boolean;
}

export interface FakeMcpServer {
  url: string;
  requests: RecordedRequest[];
  /** tools/call requests received, by tool name. */
  calls(tool?: string): RecordedRequest[];
  /** Forgets every session: the next request with an old session id gets 404. */
  expireSessions(): void;
  /** `hold` calls waiting for release() now, and the most ever waiting at once. */
  held(): { now: number; most: number };
  /** Answers every `hold` call waiting now (later ones wait for the next release). */
  release(): void;
  close(): Promise<void>;
}

export interface FakeMcpOptions {
  mode: 'stateful' | 'stateless';
  /** When set, requests without `Authorization: Bearer <token>` get 401. */
  token?: string;
  /**
   * Extra tools (name → description) that echo their arguments; a `big…` one answers `bytes` characters;
   * one named `hold` waits until release().
   */
  extraTools?: Record<string, string>;
}

export const fakeTools = [
  {
    name: 'echo',
    description: 'Echoes the text it is given.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  },
  {
    name: 'fail',
    description: 'Always reports a tool error (isError).',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'slow',
    description: 'Waits the given milliseconds, then answers.',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms'] },
  },
  {
    // No description upstream: the gateway must still list a non-empty one.
    name: 'nodesc',
    inputSchema: { type: 'object', properties: {} },
  },
];

/** Holds `hold` calls until the test releases them: a tenant occupying the upstream's connections. */
class HoldGate {
  private waiting: Array<() => void> = [];
  most = 0;

  get now(): number {
    return this.waiting.length;
  }

  wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.waiting = this.waiting.filter((entry) => entry !== done);
        resolve();
      };
      this.waiting.push(done);
      this.most = Math.max(this.most, this.waiting.length);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  release(): void {
    for (const done of [...this.waiting]) done();
  }
}

function createMcpServer(extraTools: Record<string, string>, gate: HoldGate): Server {
  const server = new Server({ name: 'fake-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = [
    ...fakeTools,
    ...Object.entries(extraTools).map(([name, description]) => ({
      name,
      description,
      inputSchema: { type: 'object', properties: {} },
    })),
  ];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as Record<string, any>;
    switch (request.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args.text) }] };
      case 'add': {
        const sum = Number(args.a) + Number(args.b);
        return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
      }
      case 'fail':
        return { content: [{ type: 'text', text: 'the tool failed on purpose' }], isError: true };
      case 'hold':
        await gate.wait(extra.signal);
        return { content: [{ type: 'text', text: 'held, then released' }] };
      case 'slow':
        await delay(Number(args.ms), undefined, { signal: extra.signal }).catch(() => {});
        return { content: [{ type: 'text', text: `waited ${args.ms} ms` }] };
      default:
        if (request.params.name.startsWith('big'))
          return { content: [{ type: 'text', text: 'x'.repeat(Number(args.bytes)) }] };
        return { content: [{ type: 'text', text: JSON.stringify({ tool: request.params.name, args }) }] };
    }
  });
  return server;
}

export async function startFakeMcpServer(options: FakeMcpOptions): Promise<FakeMcpServer> {
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const extraTools = options.extraTools ?? {};
  const gate = new HoldGate();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    const body = text ? JSON.parse(text) : undefined;
    const entry: RecordedRequest = {
      method: request.method ?? '',
      headers: request.headers,
      body,
      aborted: false,
    };
    requests.push(entry);
    response.on('close', () => {
      if (!response.writableFinished) entry.aborted = true;
    });
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      response
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"error":"unauthorized: secret detail"}');
      return;
    }
    if (options.mode === 'stateless') {
      const server = createMcpServer(extraTools, gate);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      response.on('close', () => void server.close());
      await transport.handleRequest(request, response, body);
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"session not found"}');
        return;
      }
      await transport.handleRequest(request, response, body);
      return;
    }
    const server = createMcpServer(extraTools, gate);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  }

  const http: HttpServer = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    requests,
    calls: (tool) =>
      requests.filter(
        (entry) =>
          entry.body?.method === 'tools/call' && (tool === undefined || entry.body.params?.name === tool),
      ),
    held: () => ({ now: gate.now, most: gate.most }),
    release: () => gate.release(),
    expireSessions: () => {
      for (const transport of sessions.values()) void transport.close();
      sessions.clear();
    },
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** An upstream that misbehaves on purpose: every POST is answered by `respond`. */
export async function startRawUpstream(
  respond: (response: ServerResponse, body: any) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer((request, response) => {
    readBody(request).then((text) => respond(response, text ? JSON.parse(text) : undefined));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}
