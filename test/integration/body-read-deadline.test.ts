/**
 * A slow request body times out (issue 9): Fastify's requestTimeout is 0, so an authenticated client
 * that sent half a body and stalled held its connection for ever. Now 408 after
 * general_settings.body_read_timeout_seconds, in the OpenAI envelope.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('the body-read deadline', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, generalSettings: '  body_read_timeout_seconds: 0.3\n' });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('answers 408 request_body_timeout to a client that stalls halfway through its body', async () => {
    const url = new URL(`${gateway.baseUrl}/v1/chat/completions`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': 200,
          },
        },
        (response) => {
          let body = '';
          response.on('data', (piece) => {
            body += piece;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.write('{"model":"demo","messages":['); // then nothing more
    });
    expect(answer.status).toBe(408);
    // The configured deadline ended it (its message names it), not another timeout a loaded machine hit.
    const error = JSON.parse(answer.body).error;
    expect(error.code).toBe('request_body_timeout');
    expect(error.message).toContain('within 0.3 s');
  });

  it('leaves requests whose body arrives in time alone, also on a reused connection', async () => {
    for (let index = 0; index < 3; index++) {
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    // Past the deadline of the earlier requests, the kept-alive connection still serves. This wait lets a
    // real 300 ms timer's time pass (the plugin has no injectable clock); it stands in for no event.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(
      (await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
  });
});
