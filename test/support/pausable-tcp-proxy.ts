/**
 * A TCP proxy on loopback in front of a real server (the shared PostgreSQL), for tests of a database
 * that stalls or goes away without touching the shared server: `pause()` keeps every connection open
 * but forwards nothing (a frozen server: SIGSTOP, a stuck host), `cut()` closes every connection and
 * refuses new ones (a server that went down), `resume()` brings back normal forwarding.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class PausableTcpProxy {
  readonly port: number;
  private readonly server: Server;
  private readonly pairs = new Set<{ drop(): void; flush(): void }>();
  private state: 'open' | 'paused' | 'cut' = 'open';

  private constructor(server: Server, port: number) {
    this.server = server;
    this.port = port;
  }

  /** Listens on a free loopback port and forwards to `target` (host and port). */
  static async start(target: { host: string; port: number }): Promise<PausableTcpProxy> {
    let proxy: PausableTcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    proxy = new PausableTcpProxy(server, typeof address === 'object' && address ? address.port : 0);
    return proxy;
  }

  /** Forwards nothing, either way, until resume(); connections stay open (what arrives is held). */
  pause(): void {
    this.state = 'paused';
  }

  /** Closes every connection and refuses new ones until resume(). */
  cut(): void {
    this.state = 'cut';
    for (const pair of this.pairs) pair.drop();
    this.pairs.clear();
  }

  resume(): void {
    this.state = 'open';
    for (const pair of this.pairs) pair.flush();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.state === 'cut') {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    const held: Array<[Socket, Buffer]> = [];
    const pair = {
      drop: () => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      },
      flush: () => {
        for (const [to, chunk] of held.splice(0)) to.write(chunk);
      },
    };
    this.pairs.add(pair);
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.state === 'open') to.write(chunk);
      else held.push([to, chunk]);
    };
    client.on('data', forward(upstream)).on('error', pair.drop).on('close', pair.drop);
    upstream.on('data', forward(client)).on('error', pair.drop).on('close', pair.drop);
  }
}
