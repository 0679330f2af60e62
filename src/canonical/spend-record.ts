/** What one proxied request spent: the row of spend_logs, built at settlement by the text pipeline. */

export interface SpendRecord {
  /** The gateway's own unique id of this record (the key that makes writes idempotent). */
  spendId: string;
  /** The answer's x-request-id (a caller may send its own, and reuse it). */
  requestId: string;
  /** Epoch milliseconds when the request was settled. */
  createdAt: number;
  keyId: string | null;
  userId: string | null;
  teamId: string | null;
  organizationId: string | null;
  /** The public model the caller asked for. */
  model: string;
  /** The model group that answered (another one after a fallback), when one did. */
  modelGroup: string | null;
  deploymentId: string | null;
  endpoint: string;
  attempts: number;
  stream: boolean;
  status: number;
  /**
   * False when a provider call's usage did not come from its report: counts and cost are then the
   * gateway's estimate when `usageEstimated`, else null.
   */
  usageKnown: boolean;
  /**
   * True when a call was charged the gateway's estimate (the caller left a stream before the usage
   * report and the drain ended without it, or the report was unreadable). Absent in outbox rows
   * written before it existed: false.
   */
  usageEstimated?: boolean;
  promptTokens: number | null;
  completionTokens: number | null;
  reasoningTokens: number | null;
  cachedTokens: number | null;
  cacheCreationTokens: number | null;
  totalTokens: number | null;
  /** USD; null when the usage or a deployment's price is unknown. */
  cost: number | null;
  latencyMs: number;
  ttftMs: number | null;
  cacheHit: boolean;
}

/** Reads a record back from its JSON (the outbox keeps records as JSON text). */
export function parseSpendRecord(text: string): SpendRecord {
  return JSON.parse(text) as SpendRecord;
}
