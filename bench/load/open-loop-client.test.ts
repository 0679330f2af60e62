import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOpenLoop } from './open-loop-client.ts';

describe('runOpenLoop', () => {
  let server: Server;
  let base = '';
  const seenKeys: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        seenKeys.push(String(request.headers.authorization));
        if (request.url === '/missing') {
          response.writeHead(404).end();
        } else if (request.url === '/stream') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write('data: {}\n\n');
          setTimeout(() => response.end('data: [DONE]\n\n'), 5);
        } else if (request.url === '/broken-stream') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.end('data: {}\n\n');
        } else {
          response.end('{}');
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(() => {
    server.close();
  });

  const options = {
    body: '{}',
    ratePerSecond: 200,
    durationMs: 250,
    warmupMs: 50,
    stream: false,
    connections: 8,
    maxInFlight: 100,
    requestTimeoutMs: 2_000,
  };

  it('sends rate × (warm-up + duration) requests and times only the measured ones', async () => {
    const result = await runOpenLoop({
      ...options,
      variants: [{ name: 'a', url: `${base}/ok`, headers: {} }],
    });
    expect(result.total).toBe(60);
    expect(result.variants[0]).toMatchObject({ ok: 50, non2xx: 0, errors: 0 });
    expect(result.variants[0]!.latency!.count).toBe(50);
    expect(result.scheduleLag!.count).toBe(50);
  });

  it('alternates variants request by request and reports each apart', async () => {
    seenKeys.length = 0;
    const result = await runOpenLoop({
      ...options,
      warmupMs: 0,
      durationMs: 100,
      variants: [
        { name: 'unlimited', url: `${base}/ok`, headers: { authorization: 'Bearer a' } },
        { name: 'limited', url: `${base}/missing`, headers: { authorization: 'Bearer b' } },
      ],
    });
    expect(seenKeys.filter((key) => key === 'Bearer a')).toHaveLength(10);
    expect(seenKeys.filter((key) => key === 'Bearer b')).toHaveLength(10);
    expect(result.variants.map((variant) => [variant.name, variant.ok, variant.non2xx])).toEqual([
      ['unlimited', 10, 0],
      ['limited', 0, 10],
    ]);
  });

  it('measures streams to the first and last byte, and fails a stream without [DONE]', async () => {
    const good = await runOpenLoop({
      ...options,
      stream: true,
      variants: [{ name: 's', url: `${base}/stream`, headers: {} }],
    });
    const variant = good.variants[0]!;
    expect(variant.ok).toBe(50);
    expect(variant.latency!.p50 - variant.firstByte!.p50).toBeGreaterThan(3_000);
    const broken = await runOpenLoop({
      ...options,
      stream: true,
      variants: [{ name: 's', url: `${base}/broken-stream`, headers: {} }],
    });
    expect(broken.variants[0]).toMatchObject({
      ok: 0,
      errors: 50,
      firstError: 'stream ended without [DONE]',
    });
  });
});
