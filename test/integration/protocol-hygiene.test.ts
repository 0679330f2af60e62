/**
 * Protocol hygiene (issue 9): text/plain bodies are 415 everywhere (they were parsed on /mcp and a 400
 * on chat), framework and plugin errors keep their 4xx status in the OpenAI envelope and are never
 * logged as errors (a static-path traversal was an error-level 500), unmatched paths are logged by
 * path, and a completed stream is counted once.
 */
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

/** A raw GET, so the path reaches the server exactly as written (fetch would normalise `..`). */
function rawGet(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET' }, (response) => {
      let body = '';
      response.on('data', (piece) => {
        body += piece;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('protocol hygiene', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;
  const logs: any[] = [];

  beforeAll(async () => {
    backend = sqliteBackend();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    gateway = await startTestGateway({ backend, logger: pino({ level: 'info' }, sink) });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it.each(['/v1/chat/completions', '/mcp'])('answers a text/plain body on %s with 415', async (path) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', model: 'demo', messages: [] }),
    });
    expect(response.status).toBe(415);
  });

  it('keeps 4xx statuses of the framework and plugins in the envelope, never logged as errors', async () => {
    const errorsBefore = logs.filter((entry) => entry.level >= 50).length;
    const traversal = await rawGet(gateway.baseUrl, '/docs/static/../../../etc/passwd');
    expect(traversal.status).toBeGreaterThanOrEqual(400);
    expect(traversal.status).toBeLessThan(500);
    const badEncoding = await rawGet(gateway.baseUrl, '/v1/models/%E0%A4%A');
    expect(badEncoding.status).toBe(400);
    for (const answer of [traversal, badEncoding]) {
      const body = JSON.parse(answer.body);
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toMatchObject({ type: expect.any(String), code: expect.any(String) });
    }
    expect(logs.filter((entry) => entry.level >= 50).length).toBe(errorsBefore);
  });

  it('logs an unmatched route with its path (but counts it as unmatched)', async () => {
    await fetch(`${gateway.baseUrl}/no/such/route?secret=1`);
    const line = logs.find((entry) => entry.msg === 'request completed' && entry.status === 404);
    expect(line.url).toBe('/no/such/route');
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toContain('route="unmatched"');
    expect(metrics).not.toContain('/no/such/route');
  });

  it('counts and logs a completed stream once', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-request-id': 'stream-once',
      },
      body: JSON.stringify({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await response.text()).toContain('[DONE]');
    await expect
      .poll(() => logs.filter((entry) => entry.request_id === 'stream-once').length)
      .toBeGreaterThan(0);
    await fetch(`${gateway.baseUrl}/metrics`); // one more round trip: a second record would have landed by now
    expect(logs.filter((entry) => entry.request_id === 'stream-once')).toHaveLength(1);
  });
});
