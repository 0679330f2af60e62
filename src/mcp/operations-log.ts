/**
 * Recent tool calls per server for the admin `operations` view: a bounded ring of the latest calls and
 * counts by outcome since the process started. Per process and not durable, like fallback events.
 */
export interface OperationRecord {
  at: string;
  tool: string;
  key_id: string | null;
  outcome: string;
  /** JSON-RPC error code for failures. */
  error_code: number | null;
  duration_ms: number;
}

const RING_SIZE = 100;

export class OperationsLog {
  private readonly recent = new Map<string, OperationRecord[]>();
  private readonly counts = new Map<string, Map<string, number>>();

  record(serverId: string, entry: OperationRecord): void {
    let ring = this.recent.get(serverId);
    if (!ring) {
      ring = [];
      this.recent.set(serverId, ring);
    }
    ring.push(entry);
    if (ring.length > RING_SIZE) ring.shift();
    let counts = this.counts.get(serverId);
    if (!counts) {
      counts = new Map();
      this.counts.set(serverId, counts);
    }
    counts.set(entry.outcome, (counts.get(entry.outcome) ?? 0) + 1);
  }

  /** Newest first. */
  recentCalls(serverId: string): OperationRecord[] {
    return [...(this.recent.get(serverId) ?? [])].reverse();
  }

  outcomeCounts(serverId: string): Record<string, number> {
    return Object.fromEntries(this.counts.get(serverId) ?? []);
  }

  forget(serverId: string): void {
    this.recent.delete(serverId);
    this.counts.delete(serverId);
  }
}
