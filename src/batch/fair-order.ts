/**
 * Fairness of the worker: claimable items are taken round-robin, first across owners, then across each
 * owner's batches (oldest batch first), so one owner's large batch cannot starve another owner, nor
 * one batch another of the same owner. Pure: the worker passes the candidates and a cursor it keeps.
 */

export interface Candidate {
  batchId: string;
  ownerKey: string;
  /** Batch creation time; older batches go first within an owner. */
  createdAt: number;
}

/**
 * Orders the batches that have claimable items: owners in turn starting after `lastOwner` (the owner
 * served last, for rotation across rounds), each owner's batches interleaved oldest first.
 */
export function fairOrder(candidates: readonly Candidate[], lastOwner?: string): string[] {
  const byOwner = new Map<string, Candidate[]>();
  for (const candidate of [...candidates].sort(
    (a, b) => a.createdAt - b.createdAt || cmp(a.batchId, b.batchId),
  )) {
    const list = byOwner.get(candidate.ownerKey) ?? [];
    list.push(candidate);
    byOwner.set(candidate.ownerKey, list);
  }
  const owners = [...byOwner.keys()].sort(cmp);
  const start = lastOwner === undefined ? 0 : owners.findIndex((owner) => cmp(owner, lastOwner) > 0);
  const rotated = start <= 0 ? owners : [...owners.slice(start), ...owners.slice(0, start)];
  const order: string[] = [];
  for (let round = 0; order.length < candidates.length; round++) {
    for (const owner of rotated) {
      const batch = byOwner.get(owner)![round];
      if (batch) order.push(batch.batchId);
    }
  }
  return order;
}

/**
 * Splits `slots` items across batches in the given order, one at a time round-robin, never more than a
 * batch has ready.
 */
export function shareSlots(
  order: readonly string[],
  ready: ReadonlyMap<string, number>,
  slots: number,
): Map<string, number> {
  const share = new Map<string, number>();
  let left = slots;
  let progressed = true;
  while (left > 0 && progressed) {
    progressed = false;
    for (const batchId of order) {
      if (left === 0) break;
      const taken = share.get(batchId) ?? 0;
      if (taken < (ready.get(batchId) ?? 0)) {
        share.set(batchId, taken + 1);
        left--;
        progressed = true;
      }
    }
  }
  return share;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
