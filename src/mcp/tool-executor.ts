/**
 * The one policy path every MCP tool call takes, from /mcp and from the chat tool loop alike:
 * visibility → arguments against inputSchema → policy (enabled, max_rpm, approval, result cache,
 * max_concurrency, max_total_execution_time_ms) → the upstream call → the result, unchanged. Failures
 * leave as JsonRpcErrors from the spec's table; each call is counted in metrics and the operations log.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../canonical/caller.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ApprovalGate, ApprovalTicket } from './approvals/approval-gate.ts';
import type { ArgumentValidator } from './argument-validator.ts';
import { callFingerprint } from './call-fingerprint.ts';
import { JsonRpcCode, JsonRpcError, rpcErrors } from './json-rpc-error.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import type { OperationsLog } from './operations-log.ts';
import { type EffectivePolicy, resolvePolicy } from './policy-resolution.ts';
import type { ReleaseSlot, ToolLimits } from './tool-limits.ts';
import type { UpstreamClients } from './upstream/upstream-clients.ts';
import { UpstreamMcpError } from './upstream/upstream-mcp-error.ts';
import { findVisibleTool, type VisibleTool, visibleTools, visibleToolsOfServer } from './visibility.ts';

export type CallerHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface ToolCallInput {
  caller: Caller;
  /** `server_key.tool_name`. */
  name: string;
  /** The call's arguments; undefined means `{}`. */
  arguments: unknown;
  /** The caller's request headers; only the server's allowlisted ones are forwarded. */
  headers: CallerHeaders;
  signal: AbortSignal;
}

export type ToolResult = Record<string, unknown>;

/** A tool as tools/list shows it: namespaced name, non-empty description, the upstream's inputSchema. */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface ServerTools {
  serverKey: string;
  tools: Array<{ descriptor: ToolDescriptor; policy: EffectivePolicy }>;
}

export interface ToolExecutorOptions {
  catalog: McpCatalog;
  clients: UpstreamClients;
  limits: ToolLimits;
  approvals: ApprovalGate;
  validator: ArgumentValidator;
  metrics: Metrics;
  operations: OperationsLog;
  logger: Logger;
  clock: { now(): number };
}

export class ToolExecutor {
  private readonly options: ToolExecutorOptions;

  constructor(options: ToolExecutorOptions) {
    this.options = options;
  }

  /** The tools this caller may see, from the stored catalogues (no upstream is asked). */
  listTools(caller: Caller): ToolDescriptor[] {
    return visibleTools(this.options.catalog.snapshot, caller).map(describeTool);
  }

  /** The visible tools of one server with the policy each would run under; undefined when none is visible. */
  toolsOfServer(caller: Caller, serverKey: string): ServerTools | undefined {
    const server = this.options.catalog.snapshot.byKey.get(serverKey);
    if (!server) return undefined;
    const visible = visibleToolsOfServer(server, caller);
    if (visible.length === 0) return undefined;
    return {
      serverKey,
      tools: visible.map((tool) => ({
        descriptor: describeTool(tool),
        policy: resolvePolicy(server.policies, caller, tool.tool.tool_name),
      })),
    };
  }

  async call(input: ToolCallInput): Promise<ToolResult> {
    const visible = findVisibleTool(this.options.catalog.snapshot, input.caller, input.name);
    if (!visible) throw rpcErrors.toolNotFound(input.name);
    const started = performance.now();
    let outcome = 'success';
    let errorCode: number | null = null;
    try {
      const result = await this.admitAndRun(visible, input);
      if (result.cached) outcome = 'cache_hit';
      else if (result.value.isError === true) outcome = 'tool_error';
      return result.value;
    } catch (error) {
      const failure = this.toRpcError(error, visible, input.signal);
      outcome = failure instanceof JsonRpcError ? outcomeOf(failure.code) : 'aborted';
      errorCode = failure instanceof JsonRpcError ? failure.code : null;
      throw failure;
    } finally {
      const { server, tool } = visible;
      this.options.metrics.mcpToolCalls.inc({
        server: server.record.server_key,
        tool: tool.tool_name,
        outcome,
      });
      this.options.operations.record(server.record.server_id, {
        at: new Date(this.options.clock.now()).toISOString(),
        tool: tool.tool_name,
        key_id: input.caller.keyId,
        outcome,
        error_code: errorCode,
        duration_ms: Math.round(performance.now() - started),
      });
    }
  }

  private async admitAndRun(
    visible: VisibleTool,
    input: ToolCallInput,
  ): Promise<{ value: ToolResult; cached: boolean }> {
    const { server, tool } = visible;
    const { limits, approvals } = this.options;
    const args = this.checkedArguments(visible, input.arguments);
    const policy = resolvePolicy(server.policies, input.caller, tool.tool_name);
    if (!policy.enabled)
      throw rpcErrors.denied(`a tool policy does not allow this API key to call '${visible.name}'.`);
    const headers = forwardedHeaders(server.record.forwarded_headers_allowlist, input.headers);
    const call = {
      fingerprint: callFingerprint({
        keyId: input.caller.keyId,
        serverId: server.record.server_id,
        toolName: tool.tool_name,
        arguments: args,
        headers,
      }),
      serverId: server.record.server_id,
      toolName: tool.tool_name,
      caller: input.caller,
      arguments: args,
      headerNames: Object.keys(headers),
    };
    if (policy.max_rpm !== null) {
      const counterKey = `${server.record.server_id}:${tool.tool_name}:${input.caller.keyId ?? 'master'}`;
      await limits.checkRate(visible.name, counterKey, policy.max_rpm);
    }
    // Found now, consumed only when the call is about to be answered: a call refused by max_concurrency
    // keeps its one-time approval.
    const approval = policy.require_approval === 'manual' ? await approvals.reserve(call) : undefined;
    const cacheTtl = policy.result_cache_ttl_seconds;
    if (cacheTtl !== null && cacheTtl > 0) {
      const hit = await limits.cached(call.fingerprint);
      if (hit) {
        await approval?.consume();
        return { value: hit, cached: true };
      }
    }
    const release = await this.acquireSlot(visible, policy);
    let value: ToolResult;
    try {
      value = await this.runOnConnection(visible, args, headers, input, policy, approval);
    } finally {
      await release?.();
    }
    if (cacheTtl !== null && cacheTtl > 0 && value.isError !== true)
      await limits.remember(call.fingerprint, value, cacheTtl);
    return { value, cached: false };
  }

  /**
   * Runs the call on one of its API key's share of the server's connections (upstream/connection-share.ts),
   * taken before the approval is consumed: a call refused for it keeps its approval, as one refused a
   * max_concurrency slot does.
   */
  private async runOnConnection(
    visible: VisibleTool,
    args: Record<string, unknown>,
    headers: Record<string, string>,
    input: ToolCallInput,
    policy: EffectivePolicy,
    approval: ApprovalTicket | undefined,
  ): Promise<ToolResult> {
    const connection = await this.options.clients
      .for(visible.server.record)
      .reserveConnection(input.caller.keyId ?? 'master', visible.name, input.signal);
    try {
      await approval?.consume();
      return await this.execute(visible, args, headers, input.signal, policy);
    } finally {
      connection();
    }
  }

  /** The call's arguments when they are an object matching the tool's inputSchema; -32602 otherwise. */
  private checkedArguments(visible: VisibleTool, given: unknown): Record<string, unknown> {
    const args = given ?? {};
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw rpcErrors.invalidParams('arguments must be an object.');
    }
    const problem = this.options.validator.problem(visible.tool.input_schema, args);
    if (problem)
      throw rpcErrors.invalidParams(
        `arguments do not match the inputSchema of '${visible.name}': ${problem}`,
      );
    return args as Record<string, unknown>;
  }

  /** A max_concurrency slot of the policy's scope (-32029 when all are taken); undefined without a limit. */
  private async acquireSlot(visible: VisibleTool, policy: EffectivePolicy): Promise<ReleaseSlot | undefined> {
    if (policy.max_concurrency === null) return undefined;
    const { record } = visible.server;
    return this.options.limits.acquireSlot(
      visible.name,
      `${record.server_id}:${visible.tool.tool_name}:${policy.scope}`,
      policy.max_concurrency,
      // The slot outlives the slowest call, so it is freed by the call, not by its expiry.
      (policy.max_total_execution_time_ms ?? record.request_timeout_ms * 3) + 5_000,
    );
  }

  private async execute(
    visible: VisibleTool,
    args: Record<string, unknown>,
    headers: Record<string, string>,
    callerSignal: AbortSignal,
    policy: EffectivePolicy,
  ): Promise<ToolResult> {
    const { server, tool } = visible;
    const limitMs = policy.max_total_execution_time_ms;
    const deadline = limitMs !== null ? AbortSignal.timeout(limitMs) : undefined;
    const signal = deadline ? AbortSignal.any([callerSignal, deadline]) : callerSignal;
    const started = performance.now();
    try {
      const result = await this.options.clients
        .for(server.record)
        .callTool(tool.tool_name, args, { signal, headers });
      if (!CallToolResultSchema.safeParse(result).success) {
        throw new UpstreamMcpError(
          'malformed',
          'the tools/call result does not have the shape of a tool result',
        );
      }
      return result as ToolResult;
    } catch (error) {
      if (deadline?.aborted && !callerSignal.aborted) throw rpcErrors.timedOut(visible.name, limitMs!);
      throw error;
    } finally {
      this.options.metrics.mcpToolCallDuration.observe(
        { server: server.record.server_key },
        (performance.now() - started) / 1000,
      );
    }
  }

  private toRpcError(error: unknown, visible: VisibleTool, signal: AbortSignal): unknown {
    if (error instanceof JsonRpcError) return error;
    if (signal.aborted) return error; // the caller left: nobody reads an answer
    const record = visible.server.record;
    if (error instanceof UpstreamMcpError)
      return upstreamRpcError(error, record.server_key, visible.name, record.request_timeout_ms);
    this.options.logger.error({ err: error, tool: visible.name }, 'MCP tool call failed unexpectedly');
    return rpcErrors.internal();
  }
}

export function upstreamRpcError(
  error: UpstreamMcpError,
  serverKey: string,
  toolName: string,
  requestTimeoutMs: number,
): JsonRpcError {
  switch (error.kind) {
    case 'auth':
      return rpcErrors.upstreamAuth(serverKey);
    case 'timeout':
      return rpcErrors.timedOut(toolName, requestTimeoutMs);
    case 'rpc_error':
      return rpcErrors.upstream(serverKey, 'it answered with a JSON-RPC error.', {
        upstream_code: error.rpcCode,
      });
    case 'http_status':
      return rpcErrors.upstream(serverKey, `it answered HTTP ${error.status}.`, {
        upstream_status: error.status,
      });
    default:
      return rpcErrors.upstream(serverKey, `${error.message}.`);
  }
}

function describeTool(visible: VisibleTool): ToolDescriptor {
  const definition = visible.tool.definition;
  const descriptor: ToolDescriptor = {
    name: visible.name,
    description:
      visible.tool.description?.trim() ||
      `Tool '${visible.tool.tool_name}' of the MCP server '${visible.server.record.name}'.`,
    inputSchema: visible.tool.input_schema,
  };
  if (typeof definition.title === 'string') descriptor.title = definition.title;
  if (isObject(definition.outputSchema)) descriptor.outputSchema = definition.outputSchema;
  if (isObject(definition.annotations)) descriptor.annotations = definition.annotations;
  return descriptor;
}

/** The caller's headers named in the allowlist, lower-cased (the forwarded set is part of a call's identity). */
export function forwardedHeaders(
  allowlist: readonly string[],
  headers: CallerHeaders,
): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name of allowlist) {
    const key = name.toLowerCase();
    const value = headers[key];
    if (value === undefined) continue;
    forwarded[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return forwarded;
}

function outcomeOf(code: number): string {
  switch (code) {
    case JsonRpcCode.invalidParams:
      return 'invalid_arguments';
    case JsonRpcCode.denied:
      return 'denied';
    case JsonRpcCode.approvalRequired:
      return 'approval_required';
    case JsonRpcCode.approvalDenied:
      return 'approval_denied';
    case JsonRpcCode.rateLimited:
      return 'rate_limited';
    case JsonRpcCode.timedOut:
      return 'timeout';
    case JsonRpcCode.upstreamAuth:
      return 'upstream_auth_error';
    case JsonRpcCode.upstreamFailure:
      return 'upstream_error';
    default:
      return 'internal_error';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
