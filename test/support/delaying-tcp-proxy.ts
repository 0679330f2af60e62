/**
 * A TCP proxy on loopback that slows a dependency down without stopping it: every chunk is delivered
 * `latencyMs` after it arrived (per direction, so a reply can be delayed while the request is not), in
 * order, and an optional bandwidth cap spaces chunks by their size. Settings change at run time; every
 * connection is closed with the proxy.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface DelaySettings {
  /** Added to every chunk from the client to the target. */
  requestLatencyMs: number;
  /** Added to every chunk from the target back to the client. */
  replyLatencyMs: number;
  /** Bytes per second in each direction; undefined: no cap. */
  bytesPerSecond?: number | undefined;
}

/** Chunks of one direction waiting for their delivery time. */
class DelayedPipe {
  private readonly queue: Array<{ at: number; chunk: Buffer }> = [];
  private readonly to: Socket;
  private readonly settings: () => DelaySettings;
  private readonly latency: (settings: DelaySettings) => number;
  private timer: NodeJS.Timeout | undefined;
  private lastAt = 0;
  private ended = false;

  constructor(to: Socket, settings: () => DelaySettings, latency: (settings: DelaySettings) => number) {
    this.to = to;
    this.settings = settings;
    this.latency = latency;
  }

  push(chunk: Buffer): void {
    const settings = this.settings();
    const now = performance.now();
    const transfer = settings.bytesPerSecond ? (chunk.length / settings.bytesPerSecond) * 1000 : 0;
    // Never before an earlier chunk: order is kept even when the latency is lowered meanwhile.
    this.lastAt = Math.max(now + this.latency(settings), this.lastAt + transfer);
    this.queue.push({ at: this.lastAt, chunk });
    this.schedule();
  }

  /** Ends the destination once everything queued was delivered. */
  end(): void {
    this.ended = true;
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }

  private schedule(): void {
    if (this.timer) return;
    const head = this.queue[0];
    if (!head) {
      if (this.ended) this.to.end();
      return;
    }
    this.timer = setTimeout(() => this.deliver(), Math.max(0, head.at - performance.now()));
  }

  private deliver(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0]!.at <= now) {
      if (!this.to.destroyed) this.to.write(this.queue.shift()!.chunk);
      else this.queue.shift();
    }
    this.schedule();
  }
}

export class DelayingTcpProxy {
  settings: DelaySettings;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(server: Server, settings: DelaySettings) {
    this.server = server;
    this.settings = settings;
  }

  /** Listens on a free loopback port and forwards every connection to `target`. */
  static async start(
    target: { host?: string; port: number },
    settings: Partial<DelaySettings> = {},
  ): Promise<DelayingTcpProxy> {
    const server = createServer();
    const proxy = new DelayingTcpProxy(server, {
      requestLatencyMs: settings.requestLatencyMs ?? 0,
      replyLatencyMs: settings.replyLatencyMs ?? 0,
      bytesPerSecond: settings.bytesPerSecond,
    });
    server.on('connection', (client) => proxy.forward(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  /** The proxy as a Redis URL (for a Redis target). */
  get redisUrl(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: Socket, target: { host?: string; port: number }): void {
    const upstream = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.setNoDelay(true);
      socket.once('close', () => this.sockets.delete(socket));
    }
    const settings = () => this.settings;
    const toTarget = new DelayedPipe(upstream, settings, (current) => current.requestLatencyMs);
    const toClient = new DelayedPipe(client, settings, (current) => current.replyLatencyMs);
    client.on('data', (chunk: Buffer) => toTarget.push(chunk));
    upstream.on('data', (chunk: Buffer) => toClient.push(chunk));
    client.on('end', () => toTarget.end());
    upstream.on('end', () => toClient.end());
    const teardown = () => {
      toTarget.stop();
      toClient.stop();
      client.destroy();
      upstream.destroy();
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
  }
}
