/**
 * The SHA-256 fingerprint of a tool call over its canonical JSON (lib/canonical-json.ts), which
 * decides whether two calls are "identical" for approvals and the result cache.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.ts';

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
