/**
 * Canonical JSON (object keys sorted at every depth) and the SHA-256 fingerprint of a tool call, which
 * decides whether two calls are "identical" for approvals and the result cache.
 */
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

export interface CallIdentity {
  /** The calling API key (null for the master key). */
  keyId: string | null;
  serverId: string;
  toolName: string;
  arguments: Readonly<Record<string, unknown>>;
  /** Forwarded header names (lower case) and values. */
  headers: Readonly<Record<string, string>>;
}

export function callFingerprint(call: CallIdentity): string {
  const text = canonicalJson({
    key: call.keyId,
    server: call.serverId,
    tool: call.toolName,
    arguments: call.arguments,
    headers: call.headers,
  });
  return createHash('sha256').update(text).digest('hex');
}
