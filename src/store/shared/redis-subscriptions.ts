/**
 * The Redis subscriptions of a store, on their own connection (a subscribed connection can send no
 * other command): every channel is subscribed again on each reconnection, and each handler is told to
 * resync then, because messages published while disconnected are lost.
 */
import type { Redis } from 'ioredis';
import { createRedisClient } from './create-redis-client.ts';

interface Handler {
  onMessage: (message: string) => void;
  onResync: () => void;
}

export class RedisSubscriptions {
  private readonly url: string;
  private readonly handlers = new Map<string, Handler>();
  private subscriber: Redis | undefined;

  constructor(url: string) {
    this.url = url;
  }

  /** Subscribes to `channel` (the full name, prefix included); the connection opens on the first one. */
  async add(channel: string, handler: Handler): Promise<void> {
    this.handlers.set(channel, handler);
    if (!this.subscriber) {
      const subscriber = createRedisClient(this.url, { enableOfflineQueue: true, autoResubscribe: false });
      this.subscriber = subscriber;
      subscriber.on('message', (name: string, message: string) =>
        this.handlers.get(name)?.onMessage(message),
      );
      let connectedBefore = false;
      subscriber.on('ready', () => {
        subscriber.subscribe(...this.handlers.keys()).catch(() => {});
        if (connectedBefore) this.resyncAll();
        connectedBefore = true;
      });
      subscriber.on('close', () => {
        if (connectedBefore) this.resyncAll();
      });
    } else if (this.subscriber.status === 'ready') {
      await this.subscriber.subscribe(channel);
    }
  }

  close(): void {
    this.subscriber?.disconnect();
  }

  private resyncAll(): void {
    for (const handler of this.handlers.values()) handler.onResync();
  }
}
