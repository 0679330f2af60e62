/**
 * A steady open-loop MCP load for the soak: tools/list and tools/call through the gateway's /mcp with the
 * official SDK client, started at a fixed rate whatever the answers do (like SteadyLoad for chat). Calls
 * cycle over list, echo (unique text), add (a few argument pairs, so a cached policy gets hits) and a
 * short slow call, and every answer is checked, so a wrong result counts as an error too.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface McpLoadOptions {
  baseUrl: string;
  apiKey: string;
  /** The gateway's name of the upstream (`server_key`), the prefix of every tool name. */
  serverKey: string;
  ratePerSecond: number;
  /** Client-side deadline per call; a call past it counts as `timeout`. */
  timeoutMs: number;
  /** SDK clients the calls are spread over (each a connection pool of its own). */
  clients?: number;
}

export type McpOperation = 'tools/list' | 'echo' | 'add' | 'slow';

export interface McpRecord {
  startedAt: number;
  endedAt: number;
  operation: McpOperation;
  /** `ok`, `timeout`, `network`, `rpc <code>`, `http <status>` or `wrong-answer`. */
  outcome: string;
}

const OPERATIONS: readonly McpOperation[] = ['tools/list', 'echo', 'add', 'slow'];

export class McpLoad {
  readonly records: McpRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly options: McpLoadOptions;
  private readonly clients: Client[];
  private stopped = false;
  private sent = 0;
  private loop: Promise<void> = Promise.resolve();

  private constructor(options: McpLoadOptions, clients: Client[]) {
    this.options = options;
    this.clients = clients;
  }

  /** Connects the clients (initialize) and starts the load. */
  static async start(options: McpLoadOptions): Promise<McpLoad> {
    const clients = await Promise.all(
      Array.from({ length: options.clients ?? 2 }, async () => {
        const client = new Client({ name: 'switchboard-soak', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${options.baseUrl}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } },
          }),
        );
        return client;
      }),
    );
    const load = new McpLoad(options, clients);
    load.loop = load.run();
    return load;
  }

  /** Stops starting calls, waits for those in flight and closes the clients. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.inFlight);
    await Promise.all(this.clients.map((client) => client.close().catch(() => {})));
  }

  private async run(): Promise<void> {
    const interval = 1000 / this.options.ratePerSecond;
    const begin = performance.now();
    while (!this.stopped) {
      const call = this.send(this.sent++);
      this.inFlight.add(call);
      void call.finally(() => this.inFlight.delete(call));
      await delay(Math.max(0, begin + this.sent * interval - performance.now()));
    }
  }

  private async send(index: number): Promise<void> {
    const operation = OPERATIONS[index % OPERATIONS.length]!;
    const client = this.clients[index % this.clients.length]!;
    const startedAt = performance.now();
    let outcome: string;
    try {
      outcome = (await this.call(client, operation, index)) ? 'ok' : 'wrong-answer';
    } catch (error) {
      outcome = classify(error);
    }
    this.records.push({ startedAt, endedAt: performance.now(), operation, outcome });
  }

  /** Runs one operation; true when the answer is the one the fake upstream gives. */
  private async call(client: Client, operation: McpOperation, index: number): Promise<boolean> {
    const options = { timeout: this.options.timeoutMs, maxTotalTimeout: this.options.timeoutMs };
    const tool = (name: string) => `${this.options.serverKey}.${name}`;
    switch (operation) {
      case 'tools/list': {
        const { tools } = await client.listTools(undefined, options);
        return tools.some((listed) => listed.name === tool('echo'));
      }
      case 'echo': {
        const text = `soak ${index}`;
        const result = await client.callTool({ name: tool('echo'), arguments: { text } }, undefined, options);
        return !result.isError && (result.content as Array<{ text?: string }>)[0]?.text === text;
      }
      case 'add': {
        const a = index % 7;
        const result = await client.callTool(
          { name: tool('add'), arguments: { a, b: 1 } },
          undefined,
          options,
        );
        return !result.isError && (result.structuredContent as { sum?: number } | undefined)?.sum === a + 1;
      }
      case 'slow': {
        const result = await client.callTool(
          { name: tool('slow'), arguments: { ms: 20 } },
          undefined,
          options,
        );
        return !result.isError;
      }
    }
  }
}

function classify(error: unknown): string {
  if (error instanceof McpError)
    return error.code === ErrorCode.RequestTimeout ? 'timeout' : `rpc ${error.code}`;
  // The transport's error carries the HTTP status as its code.
  if (error instanceof StreamableHTTPError && typeof error.code === 'number') return `http ${error.code}`;
  return 'network';
}
