/**
 * How many request-body bytes each key is sending at once, against one share per key, so one key's
 * large bodies cannot take the event loop and memory every tenant shares (issue 25: ten 9 MiB bodies
 * of one key delayed another tenant by 2.3 s). A body larger than the share is counted as the whole
 * share: it is admitted alone, never refused for its size (the routes' own size limits do that).
 * Per process, like the bodies themselves.
 */
export class KeyBodyBytes {
  readonly shareBytes: number;
  private readonly held = new Map<string, number>();

  constructor(shareBytes: number) {
    this.shareBytes = shareBytes;
  }

  /** Holds `bytes` for `key`: the bytes held (at most the share), or 0 when the key's share is used up. */
  reserve(key: string, bytes: number): number {
    const amount = Math.min(bytes, this.shareBytes);
    const current = this.held.get(key) ?? 0;
    if (current + amount > this.shareBytes) return 0;
    this.held.set(key, current + amount);
    return amount;
  }

  release(key: string, amount: number): void {
    const left = (this.held.get(key) ?? 0) - amount;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
  }

  /** Bytes held across all keys (what the gateway is reading at once). */
  totalBytes(): number {
    let total = 0;
    for (const bytes of this.held.values()) total += bytes;
    return total;
  }
}
