/**
 * Invalidation of cached authentications across processes and replicas. An admin change queues a
 * message in its own database transaction; after commit the message is published on the shared store
 * and removed from the queue. A publish that fails stays queued and a worker retries it, so a revoked
 * key stops working everywhere as soon as the shared store carries the message.
 */
import type { Kysely } from 'kysely';
import { errors } from '../lib/error-catalogue.ts';
import { newId } from '../lib/random.ts';
import { CacheInvalidationRepository } from '../store/db/repositories/cache-invalidation-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

export const AUTH_INVALIDATION_CHANNEL = 'auth-invalidate';

export type InvalidationTarget =
  | { kind: 'key'; id: string }
  | { kind: 'user'; id: string }
  | { kind: 'team'; id: string }
  | { kind: 'organization'; id: string }
  /** Tier policies of an organization changed: every replica reloads its tier-policy view. */
  | { kind: 'tier_policies'; id: string };

export interface InvalidationListener {
  invalidate(targets: readonly InvalidationTarget[]): void;
}

export class AuthInvalidationPublisher {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly store: SharedStore;
  private readonly local: InvalidationListener;
  private readonly now: () => number;

  constructor(options: {
    db: Kysely<DatabaseSchema>;
    store: SharedStore;
    local: InvalidationListener;
    now: () => number;
  }) {
    this.db = options.db;
    this.store = options.store;
    this.local = options.local;
    this.now = options.now;
  }

  /** Queues the invalidation inside the caller's transaction; returns the id to publish after commit. */
  async enqueue(
    transaction: Kysely<DatabaseSchema>,
    targets: readonly InvalidationTarget[],
  ): Promise<QueuedMessage> {
    const queued = { invalidation_id: newId('inv'), message: JSON.stringify(targets) };
    try {
      await new CacheInvalidationRepository(transaction).enqueue(
        queued.invalidation_id,
        queued.message,
        this.now(),
      );
    } catch {
      // The spec: an update whose invalidation cannot be queued is rolled back with 503.
      throw errors.invalidationQueueUnavailable();
    }
    return queued;
  }

  /** Applies the invalidation in this process at once, then publishes it to the others. */
  async publish(queued: QueuedMessage): Promise<void> {
    this.local.invalidate(JSON.parse(queued.message) as InvalidationTarget[]);
    try {
      await this.store.publish(AUTH_INVALIDATION_CHANNEL, queued.message);
      await new CacheInvalidationRepository(this.db).remove([queued.invalidation_id]);
    } catch {
      // Left queued: the worker retries it.
    }
  }

  /** Publishes whatever is still queued (by any replica); returns how many were published. */
  async publishQueued(): Promise<number> {
    const repository = new CacheInvalidationRepository(this.db);
    const queued = await repository.oldest(100);
    const published: string[] = [];
    for (const item of queued) {
      try {
        await this.store.publish(AUTH_INVALIDATION_CHANNEL, item.message);
        published.push(item.invalidation_id);
      } catch {
        break;
      }
    }
    await repository.remove(published);
    return published.length;
  }
}

export interface QueuedMessage {
  invalidation_id: string;
  message: string;
}

/** A listener that also knows what to do when messages may have been missed. */
export interface ResyncingListener extends InvalidationListener {
  resync(): void;
}

/** Every listener, as one (the publisher applies a change in its own process through it). */
export function allListeners(listeners: readonly InvalidationListener[]): InvalidationListener {
  return {
    invalidate: (targets) => {
      for (const listener of listeners) listener.invalidate(targets);
    },
  };
}

/**
 * Listens for invalidations published by other processes with one subscription (a shared store keeps
 * one handler per channel) shared by every listener.
 */
export async function listenForInvalidations(
  store: SharedStore,
  listeners: readonly ResyncingListener[],
): Promise<void> {
  await store.subscribe(
    AUTH_INVALIDATION_CHANNEL,
    (message) => {
      const targets = parseInvalidation(message);
      for (const listener of listeners) listener.invalidate(targets);
    },
    () => {
      for (const listener of listeners) listener.resync();
    },
  );
}

export function parseInvalidation(message: string): InvalidationTarget[] {
  try {
    const parsed: unknown = JSON.parse(message);
    return Array.isArray(parsed) ? (parsed as InvalidationTarget[]) : [];
  } catch {
    return [];
  }
}
