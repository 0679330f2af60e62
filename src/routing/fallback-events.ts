/**
 * Recent routing and failover events of this process, in a bounded ring (served by
 * GET /health/fallback-events). Not durable and not cluster-wide, as the spec says.
 */
export interface FallbackEvent {
  timestamp: string;
  request_id: string;
  /** The public model the caller asked for. */
  model: string;
  /** The model group of the next attempt (differs from `model` after a group fallback). */
  to_model: string | null;
  /** Null for a context-window fallback chosen before any attempt. */
  from_deployment: string | null;
  to_deployment: string | null;
  reason: string;
  attempt: number;
}

export const MAX_FALLBACK_EVENTS = 200;

export class FallbackEventLog {
  private readonly events: FallbackEvent[] = [];

  record(event: FallbackEvent): void {
    this.events.push(event);
    if (this.events.length > MAX_FALLBACK_EVENTS) this.events.shift();
  }

  /** The newest `limit` events, newest first. */
  recent(limit: number): FallbackEvent[] {
    return this.events.slice(-limit).reverse();
  }
}
