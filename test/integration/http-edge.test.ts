/**
 * The HTTP edge (issue 2): every error in the OpenAI envelope, request ids, Prometheus metrics, and an
 * OpenAPI document that describes every route, served from local assets under a Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('the HTTP edge', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, generalSettings: '  max_request_body_bytes: 2048\n' });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(gateway.baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body,
    });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const response = await post('/v1/chat/completions', '{"model": "demo",');
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_json',
    });
  });

  it('answers a body over the limit with 413 before reading it all', async () => {
    const response = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.code).toBe('request_too_large');
  });

  it('answers an unsupported content type with 415', async () => {
    const response = await post('/v1/chat/completions', 'model=demo', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as any).error.code).toBe('unsupported_media_type');
  });

  it('answers an unknown route with 404 in the envelope', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({
      error: { code: 'route_not_found', type: 'invalid_request_error' },
    });
  });

  it('names the offending message index in a chat validation error', async () => {
    const response = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'a' }, { role: 'user' }] }),
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.param).toBe('messages[1].content');
  });

  it('answers 404 model_not_found for a model the gateway does not serve', async () => {
    const response = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'a' }] }),
    );
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('echoes a sane x-request-id and generates one otherwise', async () => {
    const echoed = await fetch(`${gateway.baseUrl}/health/liveliness`, {
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const generated = await fetch(`${gateway.baseUrl}/health/liveliness`, {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('exports request counts and latency by route and status in the Prometheus format', async () => {
    await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'a' }] }),
    );
    const response = await fetch(`${gateway.baseUrl}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(
      /gateway_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} \d+/,
    );
    expect(text).toContain('gateway_http_request_duration_seconds_bucket');
  });

  it('serves an OpenAPI document in which every route has a summary, plus Swagger UI at /docs', async () => {
    const document = (await (await fetch(`${gateway.baseUrl}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { summary?: string }>>;
    };
    expect(document.openapi).toMatch(/^3\./);
    for (const path of [
      '/v1/chat/completions',
      '/v1/models',
      '/ui/api/keys',
      '/ui/api/keys/{key_id}',
      '/ui/api/organizations/{org_id}',
      '/ui/api/teams',
      '/ui/api/users/{user_id}',
      '/health/readiness',
      '/health/liveliness',
      '/health',
      '/metrics',
    ]) {
      expect(document.paths[path], path).toBeDefined();
    }
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations))
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
    }
    expect((await fetch(`${gateway.baseUrl}/docs/`)).status).toBe(200);
  });

  it('serves the API reference from its own assets under a CSP that forbids third-party scripts (issue 25)', async () => {
    const redoc = await fetch(`${gateway.baseUrl}/redoc`, { redirect: 'manual' });
    expect(redoc.status).toBe(301);
    expect(redoc.headers.get('location')).toBe('/docs');
    const page = await fetch(`${gateway.baseUrl}/redoc`); // followed to the Swagger UI page
    expect(page.status).toBe(200);
    const html = await page.text();
    const references = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);
    expect(references.length).toBeGreaterThan(2);
    for (const reference of references)
      expect(reference, reference).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i);
    const initializer = await (await fetch(`${gateway.baseUrl}/docs/static/swagger-initializer.js`)).text();
    expect(initializer).toContain('validatorUrl: null'); // no call to validator.swagger.io
    const policy = page.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .filter((words) => words[0])
        .map(([name, ...values]) => [name!, values]),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });
});
