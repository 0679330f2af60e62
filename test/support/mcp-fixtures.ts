/** Helpers for MCP tests: admin calls that must succeed, raw JSON-RPC posts, and SDK clients on /mcp. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestGateway } from './start-gateway.ts';

export async function adminOk(
  gateway: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<any> {
  const response = await gateway.admin(method, path, body);
  if (response.status >= 300) {
    throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** Registers an upstream and returns the server view (with `capabilities_refresh`). */
export function registerServer(gateway: TestGateway, body: Record<string, unknown>): Promise<any> {
  return adminOk(gateway, 'POST', '/ui/api/mcp-servers', body);
}

export function bind(gateway: TestGateway, body: Record<string, unknown>): Promise<any> {
  return adminOk(gateway, 'POST', '/ui/api/mcp-bindings', body);
}

export function setPolicy(gateway: TestGateway, body: Record<string, unknown>): Promise<any> {
  return adminOk(gateway, 'POST', '/ui/api/mcp-tool-policies', body);
}

/** Creates a key and returns its secret and id. */
export async function createKey(gateway: TestGateway, body: Record<string, unknown> = {}) {
  const created = await adminOk(gateway, 'POST', '/ui/api/keys', body);
  return { key: created.key as string, keyId: created.key_id as string };
}

export interface RpcAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** POSTs a raw body to /mcp (a string is sent as is, anything else as JSON). */
export async function rpc(
  baseUrl: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RpcAnswer> {
  const response = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** tools/call over raw JSON-RPC; returns the JSON-RPC answer. */
export async function callTool(
  baseUrl: string,
  key: string,
  name: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<any> {
  const answer = await rpc(
    baseUrl,
    key,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    headers,
  );
  if (answer.status !== 200) throw new Error(`tools/call answered HTTP ${answer.status}`);
  return answer.body;
}

/** The official SDK client, connected to Switchboard's /mcp with an API key. */
export async function connectClient(
  baseUrl: string,
  key: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}
