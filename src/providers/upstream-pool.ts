/** The keep-alive connection pool of one deployment (undici Pool), created once at start. */
import { Pool } from 'undici';
import { guardedLookup } from '../lib/upstream-url-policy.ts';
import type { DeploymentSettings } from './provider-adapter.ts';

export class UpstreamPool {
  readonly dispatcher: Pool;

  constructor(origin: string, settings: DeploymentSettings) {
    this.dispatcher = new Pool(origin, {
      connections: settings.maxConnections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      // Names resolving to link-local or metadata addresses are refused at connect time (issue 9).
      connect: { timeout: settings.timeouts.connectMs, lookup: guardedLookup },
    });
  }

  /** Closes gracefully; requests still running after a second (orphans of a drain) are destroyed. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const graceful = this.dispatcher.close().then(
      () => true,
      () => false,
    );
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), 1_000);
    });
    const closed = await Promise.race([graceful, gaveUp]);
    clearTimeout(timer);
    if (!closed) await this.dispatcher.destroy().catch(() => {});
  }
}
