/**
 * Request bodies are admitted before they are read (issue 25: ten 9 MiB bodies of one key delayed
 * another tenant by 2.3 s). An unknown or blocked key is refused from its headers, and the server
 * closes the connection instead of reading the body it will not use; each key's bodies in flight are
 * bounded by general_settings.max_concurrent_body_bytes_per_key (429 key_body_bytes_exceeded with
 * retry-after), while other keys are served; uploads still work and give their bytes back.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const NINE_MIB = 9 * 1024 * 1024;
const SHARE = 1024 * 1024;

/** A raw client connection: the test decides when (and whether) each byte of the body is sent. */
class RawClient {
  readonly socket: Socket;
  /** The client's port, which names the connection on the server side. */
  localPort = 0;
  private received = Buffer.alloc(0);
  private readonly waiters: Array<() => void> = [];
  closed = false;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1', () => {
      this.localPort = this.socket.localPort ?? 0;
    });
    this.socket.on('data', (data) => {
      this.received = Buffer.concat([this.received, data]);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.socket.on('error', () => {}); // writes after the server closed: EPIPE / ECONNRESET
    this.socket.on('close', () => {
      this.closed = true;
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Writes a request head, and with it (in the same write) the start of its body, if any. */
  sendHead(path: string, headers: Record<string, string | number>, body = ''): void {
    const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(
      ([name, value]) => `${name}: ${value}`,
    );
    this.socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
  }

  /** The status of the next answer, once its head has arrived (its body is then dropped). */
  async status(): Promise<number> {
    while (!this.received.includes('\r\n\r\n')) {
      if (this.closed) throw new Error('closed before an answer');
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    const head = this.received.toString('latin1');
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    const end = head.indexOf('\r\n\r\n') + 4;
    while (this.received.length < end + length && !this.closed)
      await new Promise<void>((wake) => this.waiters.push(wake));
    this.received = this.received.subarray(end + length);
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  }

  /** Writes up to `bytes` of body in 64 KiB pieces, stopping when the server has closed the connection. */
  async offerBody(bytes: number): Promise<number> {
    const piece = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    while (sent < bytes && !this.closed && this.socket.writable) {
      const ok = this.socket.write(piece.subarray(0, Math.min(piece.length, bytes - sent)));
      sent += Math.min(piece.length, bytes - sent);
      if (!ok) await new Promise<void>((wake) => this.socket.once('drain', wake).once('close', wake));
    }
    return sent;
  }

  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((wake) => this.waiters.push(wake));
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('request bodies are admitted before they are read (issue 25)', () => {
  let backend: Backend;
  let gateway: TestGateway;
  /** Server-side sockets by the client's port, to read how many bytes the server took in. */
  const serverSockets = new Map<number, Socket>();

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      batches: true,
      generalSettings: `  max_concurrent_body_bytes_per_key: ${SHARE}\n`,
    });
    gateway.gateway.app.server.on('connection', (socket: Socket) => {
      if (socket.remotePort !== undefined) serverSockets.set(socket.remotePort, socket);
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const port = () => Number(new URL(gateway.baseUrl).port);

  /** Sends a 9 MiB body's head with `authorization`, then offers the body; returns what the server read. */
  async function refusedHugeBody(authorization: string) {
    const client = new RawClient(port());
    client.sendHead('/v1/chat/completions', {
      authorization,
      'content-type': 'application/json',
      'content-length': NINE_MIB,
    });
    const status = await client.status();
    const sent = await client.offerBody(NINE_MIB);
    if (!client.closed) client.socket.end();
    await client.untilClosed();
    const serverSocket = serverSockets.get(client.localPort);
    return { status, sent, serverRead: serverSocket?.bytesRead ?? Number.NaN };
  }

  it("refuses an unknown key's 9 MiB body from its headers and never reads the body", async () => {
    const { status, serverRead } = await refusedHugeBody('Bearer sk-nobody-has-this-key');
    expect(status).toBe(401);
    // The head and what the kernel had buffered when the connection closed: far from 9 MiB.
    expect(serverRead).toBeLessThan(1024 * 1024);
  });

  it("refuses a blocked key's 9 MiB body from its headers and never reads the body", async () => {
    const created = await gateway.admin('POST', '/ui/api/keys', {});
    await gateway.admin('PUT', `/ui/api/keys/${created.body.key_id}`, { blocked: true });
    const { status, serverRead } = await refusedHugeBody(`Bearer ${created.body.key}`);
    expect(status).toBe(401);
    expect(serverRead).toBeLessThan(1024 * 1024);
  });

  it('keeps the connection of a refused request with a small body, which is cheaper to drop', async () => {
    const body = JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] });
    const client = new RawClient(port());
    const head = {
      authorization: 'Bearer sk-nobody-has-this-key',
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    client.sendHead('/v1/chat/completions', head, body);
    expect(await client.status()).toBe(401);
    client.sendHead('/v1/chat/completions', head, body); // the same connection answers again
    expect(await client.status()).toBe(401);
    client.socket.destroy();
  });

  const chat = (key: string, contentBytes: number) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'demo',
        messages: [{ role: 'user', content: 'x'.repeat(contentBytes) }],
      }),
    });

  it('refuses a key past its share of bodies in flight with 429 and retry-after, while another key is served', async () => {
    const [heavy, other] = [await gateway.createKey(), await gateway.createKey()];
    expect((await chat(heavy, 10)).status).toBe(200); // the key is known and cached from here on
    const holder = new RawClient(port());
    holder.sendHead(
      '/v1/chat/completions',
      { authorization: `Bearer ${heavy}`, 'content-type': 'application/json', 'content-length': 700_000 },
      '{"model":"demo",',
    );
    const share = gateway.gateway.app.keyBodyBytes;
    await until(() => share.totalBytes() >= 700_000, 'the held body to be admitted');

    const refused = await chat(heavy, 600_000);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      error: { type: 'rate_limit_error', code: 'key_body_bytes_exceeded', param: 'key_body_bytes' },
    });
    expect((await chat(other, 600_000)).status).toBe(200);
    expect((await chat(heavy, 1_000)).status).toBe(200); // what still fits in its share is served

    holder.socket.destroy(); // a caller that leaves gives its bytes back
    await until(() => share.totalBytes() === 0, 'the held bytes to be released');
    expect((await chat(heavy, 600_000)).status).toBe(200);
  });

  it('admits a body larger than the share alone, and keeps multipart uploads working', async () => {
    const key = await gateway.createKey();
    expect((await chat(key, 1_500_000)).status).toBe(200);
    const form = new FormData();
    form.set('purpose', 'batch');
    const line = JSON.stringify({
      custom_id: 'a',
      method: 'POST',
      url: '/v1/embeddings',
      body: { model: 'demo', input: 'x'.repeat(1_200_000) },
    });
    form.set('file', new Blob([`${line}\n`]), 'in.jsonl');
    const upload = await fetch(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(upload.status, await upload.text()).toBe(200);
    await until(() => gateway.gateway.app.keyBodyBytes.totalBytes() === 0, 'the upload to release its bytes');
  });
});
