/**
 * The JSON-RPC side of POST /mcp, independent of HTTP: validates each message, answers initialize
 * (version negotiation), ping, tools/list and tools/call, and turns every failure into a JSON-RPC error
 * object from the spec's table. Notifications and responses get no answer (the route sends 202).
 */
import type { Caller } from '../canonical/caller.ts';
import { jsonValueTooDeep, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import type { Logger } from '../observability/logger.ts';
import { JsonRpcError, rpcErrors } from './json-rpc-error.ts';
import { negotiateProtocolVersion } from './protocol-version.ts';
import type { CallerHeaders, ToolExecutor } from './tool-executor.ts';

export interface McpRequestContext {
  caller: Caller;
  headers: CallerHeaders;
  signal: AbortSignal;
}

type JsonRpcId = string | number;

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: ReturnType<JsonRpcError['toJson']>;
}

const MAX_BATCH = 100;
/**
 * Answer bytes one batch may carry in total, and how many of its calls run at once: 100 calls of a tool
 * with a 9 MiB answer once raised RSS by 490 MB in one request (issue 9). Memory stays below about
 * the budget plus BATCH_CONCURRENCY upstream answers; calls past the budget get -32005.
 */
export const MAX_BATCH_ANSWER_BYTES = 16 * 1024 * 1024;
const BATCH_CONCURRENCY = 8;

export const SERVER_INSTRUCTIONS =
  'Switchboard gateway: the tools of several MCP servers, named server_key.tool_name. Only tools your API key may use are listed.';

export class McpGateway {
  private readonly executor: ToolExecutor;
  private readonly version: string;
  private readonly logger: Logger;

  constructor(options: { executor: ToolExecutor; version: string; logger: Logger }) {
    this.executor = options.executor;
    this.version = options.version;
    this.logger = options.logger;
  }

  /** The answer to a parsed body (one message or a batch); undefined when nothing needs an answer. */
  async handle(
    body: unknown,
    context: McpRequestContext,
  ): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
    if (!Array.isArray(body)) return this.handleMessage(body, context);
    if (body.length === 0) return failure(null, rpcErrors.invalidRequest('an empty batch.'));
    if (body.length > MAX_BATCH)
      return failure(null, rpcErrors.invalidRequest(`a batch holds at most ${MAX_BATCH} messages.`));
    const answers = await this.handleBatch(body, context);
    const responses = answers.filter((answer): answer is JsonRpcResponse => answer !== undefined);
    return responses.length > 0 ? responses : undefined;
  }

  /** Runs a batch a few messages at a time within its answer-byte budget. */
  private async handleBatch(
    messages: readonly unknown[],
    context: McpRequestContext,
  ): Promise<Array<JsonRpcResponse | undefined>> {
    const answers: Array<JsonRpcResponse | undefined> = new Array(messages.length);
    let used = 0;
    let next = 0;
    const overBudget = (message: unknown): JsonRpcResponse | undefined => {
      const record = (message ?? {}) as Record<string, unknown>;
      if (typeof record !== 'object' || !('id' in record)) return undefined; // a notification: no answer
      return failure(isId(record.id) ? record.id : null, rpcErrors.batchTooLarge(MAX_BATCH_ANSWER_BYTES));
    };
    const worker = async () => {
      while (next < messages.length) {
        const index = next++;
        if (used >= MAX_BATCH_ANSWER_BYTES) {
          answers[index] = overBudget(messages[index]);
          continue;
        }
        const answer = await this.handleMessage(messages[index], context);
        used += answer?.result === undefined ? 0 : JSON.stringify(answer.result).length;
        answers[index] = used > MAX_BATCH_ANSWER_BYTES ? overBudget(messages[index]) : answer;
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, messages.length) }, worker));
    return answers;
  }

  private async handleMessage(
    message: unknown,
    context: McpRequestContext,
  ): Promise<JsonRpcResponse | undefined> {
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      return failure(null, rpcErrors.invalidRequest('a JSON-RPC message must be an object.'));
    }
    const record = message as Record<string, unknown>;
    const id = isId(record.id) ? record.id : null;
    if (record.jsonrpc !== '2.0') return failure(id, rpcErrors.invalidRequest('jsonrpc must be "2.0".'));
    if (typeof record.method !== 'string') {
      if ('result' in record || 'error' in record) return undefined; // a response to a request we never sent
      return failure(id, rpcErrors.invalidRequest('method must be a string.'));
    }
    if (!('id' in record)) return undefined; // a notification
    if (id === null) return failure(null, rpcErrors.invalidRequest('id must be a string or an integer.'));
    const params = record.params ?? {};
    if (params === null || typeof params !== 'object' || Array.isArray(params)) {
      return failure(id, rpcErrors.invalidParams('params must be an object.'));
    }
    if (jsonValueTooDeep(params)) {
      // Parsing deep JSON is safe; hashing or forwarding it would overflow the stack (issue 9).
      return failure(id, rpcErrors.invalidParams(`params nest deeper than ${MAX_JSON_DEPTH} levels.`));
    }
    try {
      return {
        jsonrpc: '2.0',
        id,
        result: await this.dispatch(record.method, params as Record<string, unknown>, context),
      };
    } catch (error) {
      if (error instanceof JsonRpcError) return failure(id, error);
      if (context.signal.aborted) return undefined; // the caller left
      this.logger.error({ err: error, method: record.method }, 'MCP request failed unexpectedly');
      return failure(id, rpcErrors.internal());
    }
  }

  private async dispatch(
    method: string,
    params: Record<string, unknown>,
    context: McpRequestContext,
  ): Promise<unknown> {
    switch (method) {
      case 'initialize':
        return this.initialize(params);
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.executor.listTools(context.caller) };
      case 'tools/call': {
        if (typeof params.name !== 'string' || params.name.length === 0) {
          throw rpcErrors.invalidParams('name must be the namespaced tool name (server_key.tool_name).');
        }
        const args = params.arguments;
        if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
          throw rpcErrors.invalidParams('arguments must be an object.');
        }
        return this.executor.call({
          caller: context.caller,
          name: params.name,
          arguments: args,
          headers: context.headers,
          signal: context.signal,
        });
      }
      default:
        throw rpcErrors.methodNotFound(method);
    }
  }

  private initialize(params: Record<string, unknown>): unknown {
    if (typeof params.protocolVersion !== 'string') {
      throw rpcErrors.invalidParams('initialize needs protocolVersion (a string such as "2025-06-18").');
    }
    return {
      protocolVersion: negotiateProtocolVersion(params.protocolVersion),
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'switchboard', title: 'Switchboard MCP gateway', version: this.version },
      instructions: SERVER_INSTRUCTIONS,
    };
  }
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

export function failure(id: JsonRpcId | null, error: JsonRpcError): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: error.toJson() };
}
